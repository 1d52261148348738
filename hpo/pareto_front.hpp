// Pareto dominance over trials' values, as Optuna's study.best_trials: a
// trial is on the front when no other COMPLETE trial is at least as good on
// every objective and better on one. Values are compared as losses (a
// maximized objective negated), so "smaller is better" everywhere.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <vector>

namespace bfhpo::hpo {

// The trial's values signed so that smaller is better; empty when it has
// none or their count differs from the directions'.
std::vector<double> loss_values(const FrozenTrial& trial, const Directions& directions);
// a dominates b: a <= b everywhere and a < b somewhere (same length).
bool dominates(const std::vector<double>& a, const std::vector<double>& b);
// Each point's non-domination rank (fast non-dominated sort): 0 for the
// points no other dominates, 1 for those only rank-0 points dominate, ...
// Equal points share a rank.
std::vector<int> non_domination_ranks(const std::vector<std::vector<double>>& losses);

// Optuna's best_trials: the COMPLETE trials whose values have the study's
// count and no NaN, feasible ones only (hpo/study_objectives.hpp) when any
// trial has constraints, that no other such trial dominates; in number
// order, trials with equal values all kept. With one objective, every trial
// holding the best value.
std::vector<FrozenTrial> pareto_front(const std::vector<FrozenTrial>& trials, const Directions& directions);

}  // namespace bfhpo::hpo
