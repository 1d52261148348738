// The hypervolume of a set of loss vectors (smaller is better): the measure
// of the union of the boxes [p, reference] over the points p. A point that
// is not below the reference in every coordinate adds nothing. Exact in any
// dimension: 1-D and 2-D by a sweep, 3-D by a sweep over the third objective
// that keeps the 2-D staircase of the points so far (O(n log n)), 4-D and
// more by WFG (While, Bradstreet and Barone 2012: each point's exclusive
// volume is its box less the hypervolume of the others limited to it),
// which bottoms out in the 3-D sweep.
// Multi-objective TPE (multi_objective_split.hpp) uses the exclusive
// contributions and the greedy subset selection to pick its good trials.
#pragma once

#include <vector>

namespace bfhpo::hpo::tpe {

// One loss vector per point; every point and the reference have the same size.
using LossPoints = std::vector<std::vector<double>>;

double hypervolume(const LossPoints& points, const std::vector<double>& reference);

// Per point: hypervolume(points) less hypervolume(points without it). A point
// that another point equals or dominates contributes 0.
std::vector<double> hypervolume_contributions(const LossPoints& points, const std::vector<double>& reference);

// The greedy answer to the hypervolume subset selection problem: `k` indices
// of `points` (0 <= k <= size), chosen one at a time, each the point that adds
// the most hypervolume to those chosen before (ties: the lowest index), in
// the order chosen. Within (1 - 1/e) of the best subset's hypervolume
// (Guerreiro, Fonseca and Paquete 2016). Gains only shrink as the subset grows
// (the hypervolume is submodular), so a point is re-evaluated only when its
// last gain could still be the largest.
std::vector<int> greedy_hypervolume_subset(const LossPoints& points, int k, const std::vector<double>& reference);

}  // namespace bfhpo::hpo::tpe
