// What `bfhpo status --json` and `bfhpo export` show: counts by state, the
// best trial, every trial as JSON or CSV, the best params. Pure functions of
// the trials, so they are tested without a terminal.
#pragma once

#include "common/user_error.hpp"
#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

// An objective value in JSON output: the number, or for a value JSON has no
// number for (Optuna writers record +-inf) the string of Python's token,
// "Infinity", "-Infinity", "NaN"; null for none.
nlohmann::json value_json(std::optional<double> value);
// {"study", "direction", "n_trials", "counts": {"COMPLETE": n, ...}, "finished",
//  "best": {"number", "value", "params"} or null, "trials": [...]}; with
// several objectives "objectives": [{"metric", "direction"}...] in place of
// "direction", "best_trials" (the Pareto front) in place of "best", and
// "values" lists in place of "value".
nlohmann::json study_status_json(const StudySpec& spec, const std::vector<FrozenTrial>& trials);
// {"study", "trial", "value", "params": {name: external value}, "user_attrs"} of one trial.
nlohmann::json trial_summary_json(const StudySpec& spec, const FrozenTrial& trial);
// Why a study has no best trial: no COMPLETE trial yet, or none that meets
// its constraints (then none is feasible), with the fix.
UserError no_best_trial_error(const StudySpec& spec, const std::vector<FrozenTrial>& trials);
// trial_summary_json of the best trial; UserError if no COMPLETE (feasible)
// trial (no_best_trial_error), or the study has several objectives.
nlohmann::json best_trial_json(const StudySpec& spec, const std::vector<FrozenTrial>& trials);
// One row per trial: number,state,value (values_<metric>... for several objectives),datetime_start,datetime_complete,params_<name>...,
// user_attrs_<key>...,system_attrs_<key>... (pandas-friendly, RFC 4180 quoting;
// an infinite value as pandas writes it: inf, -inf).
std::string trials_csv(const StudySpec& spec, const std::vector<FrozenTrial>& trials);

}  // namespace bfhpo::hpo
