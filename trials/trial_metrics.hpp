// The metrics a training trial reports, by name: what a study's "objectives"
// and "constraints" (hpo/study_objectives.hpp) may name, and how each is
// read from a finished trial.
//
//   val_nll            validation negative log posterior density (the loss)
//   calibration_error  mean over parameters of the posterior's calibration error
//   recovery_r         mean over parameters of r(posterior mean, truth)
//   nrmse              mean over parameters of the normalized RMSE
//   contraction        mean over parameters of the posterior contraction
//   measured_peak_mb   the peak the trial measured while it trained
//   estimated_peak_mb  the gate's estimate at the study's largest shape
//   train_seconds      the wall time of training (fit and OOM retries)
//
// A training study with "objectives" records each objective's metric as the
// trial's value of that objective; its "constraints" become Optuna's
// constraint values (metric - bound for <=, bound - metric for >=).
#pragma once

#include "hpo/study_spec.hpp"
#include "trials/study_settings.hpp"
#include "trials/trial_metric_names.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::trials {

using TrialMetrics = std::map<std::string, double>;

// The names Optuna's study:metric_names records: the objectives' metrics, or
// the single objective's name (Objective::name()).
std::vector<std::string> objective_names(const hpo::StudySpec& spec, const StudySettings& settings);
// The trial's values, one per objective: the named metrics, or the single
// objective's (weighted) value. None when a metric it needs is missing or
// not finite.
std::optional<std::vector<double>> objective_values(const hpo::StudySpec& spec, const StudySettings& settings,
                                                    const TrialMetrics& metrics);
// The constraint values of spec.constraints, in order; none without constraints.
std::optional<std::vector<double>> constraint_values(const hpo::StudySpec& spec, const TrialMetrics& metrics);

}  // namespace bfhpo::trials
