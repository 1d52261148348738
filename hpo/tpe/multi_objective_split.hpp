// Multi-objective TPE's good trials, after Optuna 5's TPESampler with several
// objectives (Ozaki et al. 2020/2022, MOTPE): among the trials to split
// (COMPLETE and feasible, their values as losses), whole non-domination ranks
// go "below" best first, and the first rank that does not fit whole is cut
// by greedy hypervolume subset selection (hypervolume.hpp) against that
// rank's own reference point. The sampler (tpe_sampler.cpp) puts pruned and
// infeasible trials after these, as with one objective.
#pragma once

#include "hpo/tpe/hypervolume.hpp"

#include <Eigen/Core>

#include <vector>

namespace bfhpo::hpo::tpe {

// The reference point multi-objective TPE measures loss vectors against:
// per objective, a tenth of the worst value beyond it (max(1.1 w, 0.9 w)),
// 1e-12 where that is 0.
std::vector<double> tpe_reference_point(const LossPoints& losses);

// The n_below best of `losses` (0 <= n_below <= size; no NaN), as indices in
// ascending order. Where the cut rank holds an infinite loss (no finite
// reference point), its first points by index are taken.
std::vector<int> multi_objective_below(const LossPoints& losses, int n_below);

// bfhpo's below weights with several objectives: each below trial's
// exclusive hypervolume contribution among the below trials (reference point
// as above), floored at 1e-12 of the largest and scaled to mean 1, so that
// the trials that hold the most of the front carry the most mass; all equal
// when there are fewer than two or no finite positive contribution.
Eigen::ArrayXd hypervolume_contribution_weights(const LossPoints& below);

}  // namespace bfhpo::hpo::tpe
