#include "trials/trial_metrics.hpp"

#include <cmath>

namespace bfhpo::trials {

std::vector<std::string> objective_names(const hpo::StudySpec& spec, const StudySettings& settings) {
  if (!spec.named_objectives()) return {settings.objective.name()};
  std::vector<std::string> names;
  for (const auto& objective : spec.objectives) names.push_back(objective.metric);
  return names;
}

std::optional<std::vector<double>> objective_values(const hpo::StudySpec& spec, const StudySettings& settings,
                                                    const TrialMetrics& metrics) {
  const auto metric = [&](const std::string& name) -> std::optional<double> {
    const auto found = metrics.find(name);
    if (found == metrics.end() || !std::isfinite(found->second)) return std::nullopt;
    return found->second;
  };
  std::vector<double> values;
  if (!spec.named_objectives()) {
    const auto nll = metric("val_nll");
    const auto calibration = metric("calibration_error");
    if (!nll || !calibration) return std::nullopt;
    const double value = settings.objective.value(*nll, *calibration);
    if (!std::isfinite(value)) return std::nullopt;
    return std::vector<double>{value};
  }
  for (const auto& objective : spec.objectives) {
    const auto value = metric(objective.metric);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

std::optional<std::vector<double>> constraint_values(const hpo::StudySpec& spec, const TrialMetrics& metrics) {
  if (spec.constraints.empty()) return std::nullopt;
  std::vector<double> values;
  for (const auto& constraint : spec.constraints) {
    const auto found = metrics.find(constraint.metric);
    // A metric the trial lacks violates its constraint (Optuna: NaN is infeasible).
    values.push_back(found == metrics.end() ? std::nan("") : constraint.value(found->second));
  }
  return values;
}

}  // namespace bfhpo::trials
