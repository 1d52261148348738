// The names of the metrics a training trial reports (trials/trial_metrics.hpp
// says what each is), which a training study's "objectives" and
// "constraints" may name. Header-only and LibTorch-free, so that every verb
// of the front (ask, tell, status, report, export) refuses a study that names
// another, as bfhpo optimize does.
#pragma once

#include "common/config_reader.hpp"
#include "common/user_error.hpp"
#include "hpo/study_spec.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace bfhpo::trials {

// val_nll, calibration_error, recovery_r, nrmse, contraction, measured_peak_mb, estimated_peak_mb, train_seconds.
inline const std::vector<std::string>& trial_metric_names() {
  static const std::vector<std::string> names = {"val_nll",     "calibration_error", "recovery_r",
                                                 "nrmse",       "contraction",       "measured_peak_mb",
                                                 "estimated_peak_mb", "train_seconds"};
  return names;
}

// UserError naming the study file, the field ("objectives[1].metric",
// "constraints[0]") and the closest metric, for a name not above.
inline void check_trial_metrics(const hpo::StudySpec& spec) {
  const auto& names = trial_metric_names();
  const auto check = [&](const std::string& metric, const std::string& field) {
    if (std::find(names.begin(), names.end(), metric) != names.end()) return;
    std::string all;
    for (const auto& name : names) all += (all.empty() ? "" : ", ") + name;
    throw UserError::at(spec.source.string(), field,
                        "\"" + metric + "\" is not a metric a training trial reports (did you mean '" +
                            closest_name(metric, names) + "'?)",
                        "name one of " + all);
  };
  if (spec.named_objectives())
    for (std::size_t i = 0; i < spec.objectives.size(); ++i)
      check(spec.objectives[i].metric, "objectives[" + std::to_string(i) + "].metric");
  for (std::size_t i = 0; i < spec.constraints.size(); ++i)
    check(spec.constraints[i].metric, "constraints[" + std::to_string(i) + "]");
}

}  // namespace bfhpo::trials
