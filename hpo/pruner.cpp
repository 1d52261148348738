#include "hpo/pruner.hpp"

#include "common/config_reader.hpp"
#include "common/number_format.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bfhpo::hpo {
namespace {

bool better_or_equal(double a, double b, StudyDirection direction) {
  return direction == StudyDirection::Minimize ? a <= b : a >= b;
}

// The p-th percentile, linear between the ranks as numpy.percentile.
double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

// "the median", "the 75th percentile".
std::string percentile_name(double p) {
  if (p == 50.0) return "the median";
  const std::string number = format_number(p);
  const bool teen = std::fmod(p, 100.0) >= 11 && std::fmod(p, 100.0) <= 13;
  const char last = number.back();
  const char* suffix = teen || number.find('.') != std::string::npos ? "th"
                       : last == '1'                                 ? "st"
                       : last == '2'                                 ? "nd"
                       : last == '3'                                 ? "rd"
                                                                     : "th";
  return "the " + number + suffix + " percentile";
}

std::string rung_key(int rung) { return "completed_rung_" + std::to_string(rung); }

}  // namespace

PruneDecision PercentilePruner::decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
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
  PruneDecision decision;
  if (!any) {
    decision.prune = true;
    decision.explanation = "step " + std::to_string(step) + ": every reported value is NaN";
    return decision;
  }
  const double p = direction == StudyDirection::Minimize ? options_.percentile : 100.0 - options_.percentile;
  const double threshold = percentile(at_step, p);
  decision.prune = !better_or_equal(best, threshold, direction);
  if (decision.prune)
    decision.explanation = "step " + std::to_string(step) + ": best value " + format_number(best) +
                           " is worse than " + percentile_name(options_.percentile) + " " +
                           format_number(threshold) + " of " + std::to_string(at_step.size()) +
                           " completed trials at that step";
  return decision;
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
      decision.explanation = "step " + std::to_string(step) + ": the value is NaN";
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
      decision.explanation = "rung " + std::to_string(rung) + " (step " + std::to_string(step) + "): only " +
                             std::to_string(competing.size()) + " trials reached it, bootstrap_count is " +
                             std::to_string(options_.bootstrap_count);
      return decision;
    }
    std::sort(competing.begin(), competing.end());
    if (direction == StudyDirection::Maximize) std::reverse(competing.begin(), competing.end());
    int promotable = static_cast<int>(competing.size()) / options_.reduction_factor - 1;
    promotable = std::max(promotable, 0);
    if (!better_or_equal(value, competing[promotable], direction)) {
      decision.prune = true;
      decision.explanation = "rung " + std::to_string(rung) + " (step " + std::to_string(step) + "): value " +
                             format_number(value) + " is outside the top 1/" +
                             std::to_string(options_.reduction_factor) + " of " + std::to_string(competing.size()) +
                             " trials at that rung (threshold " + format_number(competing[promotable]) + ")";
      return decision;
    }
  }
}

std::unique_ptr<Pruner> make_pruner(const nlohmann::json& section_json, const std::string& source) {
  ConfigSection section(section_json, source, "pruner");
  const auto set = [&](const char* key, int& field, int minimum) {
    if (const auto n = section.int32(key, minimum)) field = *n;
  };
  std::unique_ptr<Pruner> pruner;
  const std::string type =
      section.choice("type", {"none", "median", "percentile", "successive_halving"}).value_or("none");
  if (type == "median" || type == "percentile") {
    PercentilePrunerOptions o;
    if (type == "percentile") {
      o.percentile = section.number("percentile").value_or(75.0);
      if (o.percentile <= 0.0 || o.percentile >= 100.0)
        section.check(ConfigProblem{"percentile", "must lie between 0 and 100, exclusive",
                                    "give e.g. 75 to stop only the worst quarter of the trials at a step"});
    }
    set("n_startup_trials", o.n_startup_trials, 0);
    set("n_warmup_steps", o.n_warmup_steps, 0);
    set("interval_steps", o.interval_steps, 1);
    set("n_min_trials", o.n_min_trials, 1);
    pruner = std::make_unique<PercentilePruner>(o);
  } else if (type == "successive_halving") {
    SuccessiveHalvingOptions o;
    set("min_resource", o.min_resource, 1);
    set("reduction_factor", o.reduction_factor, 2);
    set("min_early_stopping_rate", o.min_early_stopping_rate, 0);
    set("bootstrap_count", o.bootstrap_count, 0);
    pruner = std::make_unique<SuccessiveHalvingPruner>(o);
  }
  section.reject_unknown_keys();
  return pruner;
}

}  // namespace bfhpo::hpo
