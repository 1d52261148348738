// Which parameters the objective depends on, by a method simple enough to
// state in one sentence and cheap enough for any study:
//
//   For each parameter, a one-way ANOVA of the COMPLETE trials' objective
//   RANKS on the parameter's bins -- its categories, its distinct values when
//   it has at most `max_bins`, else `max_bins` equal-count bins by rank (k =
//   clamp(round(sqrt n), 2, max_bins)); trials where a conditional parameter
//   is absent form a bin of their own -- gives omega squared,
//   w2 = (SS_between - (k - 1) MS_within) / (SS_total + MS_within),
//   the share of the rank variance the bins explain beyond chance, floored at
//   0. The importances are the w2 normalised to sum to 1 (all 0 when none
//   explains anything).
//
// Ranks make it invariant to monotone transforms of the objective (a
// diverged outlier does not dominate) and, with rank bins, of the parameter
// (log scales need no special case). Unlike fANOVA it sees no interactions.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <string>
#include <vector>

namespace bfhpo::report {

struct ParamImportance {
  std::string name;
  double omega_squared = 0.0;  // share of the rank variance explained, floored at 0
  double importance = 0.0;     // omega_squared normalised over the parameters
  int bins = 0;
};

// Sorted by importance, highest first; empty with fewer than 4 COMPLETE trials.
std::vector<ParamImportance> param_importances(const std::vector<hpo::FrozenTrial>& trials, int max_bins = 5);

}  // namespace bfhpo::report
