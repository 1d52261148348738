// What a study optimizes: one objective or several, each a metric with a
// direction (Optuna's study.directions and study:metric_names), and the
// constraints a trial must meet to count (Optuna's constraints_func: one
// value per constraint, feasible when every value is <= 0, stored in the
// trial's system attribute "constraints").
//
//   "direction": "minimize"                              one objective (the default)
//   "objectives": [{"metric": "val_nll", "direction": "minimize"},
//                  {"metric": "measured_peak_mb", "direction": "minimize"}]
//   "constraints": ["calibration_error <= 0.02", "train_seconds <= 600"]
//
// "objectives" replaces "direction" (and a training study's "objective");
// a list of one is a single-objective study with a named metric. Which
// metrics exist is the evaluator's business: a training study's trials layer
// checks the names against what a trial reports (trials/trial_metrics.hpp);
// in an external-objective study (ask and tell) the metrics are the names of
// the values tell receives, and a constraint names one of them.
#pragma once

#include "common/config_reader.hpp"
#include "hpo/frozen_trial.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

// Optuna's system attribute of a trial's constraint values.
inline constexpr const char* kConstraintsAttr = "constraints";

struct ObjectiveSpec {
  std::string metric;  // empty: the study's single unnamed objective
  StudyDirection direction = StudyDirection::Minimize;
};

// `metric <= bound` or `metric >= bound`.
struct ConstraintSpec {
  std::string metric;
  bool at_most = true;  // <= (else >=)
  double bound = 0.0;

  // Optuna's constraint value: <= 0 when met, by how much it is missed otherwise.
  double value(double metric_value) const { return at_most ? metric_value - bound : bound - metric_value; }
  std::string text() const;  // "calibration_error <= 0.02"
};

// Reads "direction", "objectives" and "constraints" of the study file's top
// level; UserError naming the file, the field and the fix (a direction that
// is not minimize/maximize, a metric named twice, "objectives" beside
// "direction" or "objective", a constraint that is not `metric <= number`).
std::vector<ObjectiveSpec> parse_objectives(ConfigSection& top);
std::vector<ConstraintSpec> parse_constraints(ConfigSection& top);

// A trial's constraint values as Optuna reads them: the "constraints" list
// (Optuna 3, and bfhpo) followed by Optuna 5's "constraints:<key>" attributes;
// empty when it has none.
std::vector<double> constraint_values(const FrozenTrial& trial);
// True when every constraint value is <= 0 (a trial without any is feasible).
bool is_feasible(const FrozenTrial& trial);
// True when any trial has constraint values: a constrained study, whose
// infeasible trials Optuna leaves out of best_trial and best_trials.
bool has_constraints(const std::vector<FrozenTrial>& trials);

}  // namespace bfhpo::hpo
