#include "hpo/pruner.hpp"

#include "common/user_error.hpp"
#include "hpo/section_options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bfhpo::hpo {
namespace {

bool better_or_equal(double a, double b, StudyDirection direction) {
  return direction == StudyDirection::Minimize ? a <= b : a >= b;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string rung_key(int rung) { return "completed_rung_" + std::to_string(rung); }

}  // namespace

PruneDecision MedianPruner::decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
                                   StudyDirection direction) const {
  if (trial.intermediate_values.empty()) return {};
  const int step = trial.intermediate_values.rbegin()->first;
  std::vector<double> at_step;
  int completed = 0;
  for (const auto& other : trials) {
    if (other.state != TrialState::Complete || other.number == trial.number) continue;
    ++completed;
    auto v = other.intermediate_values.find(step);
    if (v != other.intermediate_values.end() && !std::isnan(v->second)) at_step.push_back(v->second);
  }
  if (completed < options_.n_startup_trials) return {};
  if (step < options_.n_warmup_steps) return {};
  if ((step - options_.n_warmup_steps) % options_.interval_steps != 0) return {};
  if (static_cast<int>(at_step.size()) < options_.n_min_trials || at_step.empty()) return {};

  double best = direction == StudyDirection::Minimize ? std::numeric_limits<double>::infinity()
                                                      : -std::numeric_limits<double>::infinity();
  bool any = false;
  for (const auto& [s, v] : trial.intermediate_values) {
    if (std::isnan(v)) continue;
    any = true;
    best = direction == StudyDirection::Minimize ? std::min(best, v) : std::max(best, v);
  }
  if (!any) return {true, {}};
  return {!better_or_equal(best, median(at_step), direction), {}};
}

PruneDecision SuccessiveHalvingPruner::decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
                                              StudyDirection direction) const {
  PruneDecision decision;
  if (trial.intermediate_values.empty()) return decision;
  const int step = trial.intermediate_values.rbegin()->first;
  const double value = trial.intermediate_values.rbegin()->second;

  int rung = 0;
  while (trial.system_attrs.contains(rung_key(rung))) ++rung;
  for (;; ++rung) {
    double promotion_step = options_.min_resource *
                            std::pow(options_.reduction_factor, options_.min_early_stopping_rate + rung);
    if (step < promotion_step) return decision;
    if (std::isnan(value)) {
      decision.prune = true;
      return decision;
    }
    decision.system_attrs[rung_key(rung)] = value;

    std::vector<double> competing{value};
    for (const auto& other : trials) {
      if (other.number == trial.number) continue;
      auto recorded = other.system_attrs.find(rung_key(rung));
      if (recorded != other.system_attrs.end() && recorded->is_number()) competing.push_back(recorded->get<double>());
    }
    if (static_cast<int>(competing.size()) <= options_.bootstrap_count) {
      decision.prune = true;
      return decision;
    }
    std::sort(competing.begin(), competing.end());
    if (direction == StudyDirection::Maximize) std::reverse(competing.begin(), competing.end());
    int promotable = static_cast<int>(competing.size()) / options_.reduction_factor - 1;
    promotable = std::max(promotable, 0);
    if (!better_or_equal(value, competing[promotable], direction)) {
      decision.prune = true;
      return decision;
    }
  }
}

std::unique_ptr<Pruner> make_pruner(const nlohmann::json& section, const std::string& source) {
  const std::string type = section.value("type", std::string("none"));
  if (type == "none") return nullptr;
  if (type == "median") {
    MedianPrunerOptions o;
    o.n_startup_trials = int_option(section, "pruner", "n_startup_trials", o.n_startup_trials, 0, source);
    o.n_warmup_steps = int_option(section, "pruner", "n_warmup_steps", o.n_warmup_steps, 0, source);
    o.interval_steps = int_option(section, "pruner", "interval_steps", o.interval_steps, 1, source);
    o.n_min_trials = int_option(section, "pruner", "n_min_trials", o.n_min_trials, 1, source);
    return std::make_unique<MedianPruner>(o);
  }
  if (type == "successive_halving") {
    SuccessiveHalvingOptions o;
    o.min_resource = int_option(section, "pruner", "min_resource", o.min_resource, 1, source);
    o.reduction_factor = int_option(section, "pruner", "reduction_factor", o.reduction_factor, 2, source);
    o.min_early_stopping_rate = int_option(section, "pruner", "min_early_stopping_rate", o.min_early_stopping_rate, 0, source);
    o.bootstrap_count = int_option(section, "pruner", "bootstrap_count", o.bootstrap_count, 0, source);
    return std::make_unique<SuccessiveHalvingPruner>(o);
  }
  throw UserError::at(source, "pruner.type", "unknown pruner '" + type + "'",
                      "use \"none\", \"median\" or \"successive_halving\"");
}

}  // namespace bfhpo::hpo
