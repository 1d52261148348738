// Pareto smoothed importance sampling (Vehtari, Simpson, Gelman, Yao & Gabry
// 2024): how far a proposal (here the amortized posterior) is from a target
// known up to a constant (here the exact posterior), and weights that correct
// it when it is close enough.
//
// The largest M = ceil(min(0.2 S, 3 sqrt(S))) of S importance ratios are
// replaced by the expected order statistics of a generalized Pareto
// distribution fitted to them (Zhang & Stephens 2009's estimator with its
// weakly informative prior on the shape, as the R package loo does), capped
// at the largest raw ratio. The fitted shape k-hat is the diagnostic: below
// min(1 - 1 / log10 S, 0.7) the smoothed weights give estimates with
// practically useful error; above it the proposal misses mass of the target
// and no reweighting of its draws can be trusted.
#pragma once

#include <cstdint>
#include <vector>

namespace bfhpo::inference {

// The threshold of k-hat below which S draws' smoothed weights are trusted:
// min(1 - 1 / log10 S, 0.7) (0.5 at 100 draws, 0.667 at 1,000, 0.7 from 2,154).
double pareto_k_threshold(int64_t draws);

// The fewest draws pareto_smooth takes: their tail, ceil(0.2 S), must hold
// the 5 exceedances generalized_pareto_shape fits.
inline constexpr int64_t kFewestSmoothedDraws = 21;

struct ParetoSmoothedWeights {
  std::vector<double> weights;  // normalised to sum 1, in the log ratios' order
  double pareto_k = 0.0;  // -infinity when the largest ratios tie (bounded ratios)
  double effective_sample_size = 0.0;  // 1 / sum w^2 of the smoothed weights
  // k-hat below pareto_k_threshold of its draws.
  bool reliable() const;
};

// From log importance ratios log p(x_s) - log q(x_s) (any constant added);
// at least kFewestSmoothedDraws of them, finite or -inf (a draw the target rules out).
ParetoSmoothedWeights pareto_smooth(const std::vector<double>& log_ratios);

// Zhang & Stephens' estimate of the shape k of a generalized Pareto
// distribution (location 0) from exceedances `x`, with loo's prior (the
// estimate shrunk towards 0.5 by 10 pseudo-observations). Positive k: a
// heavy tail, its moments above 1 / k infinite. Infinity when a quarter of
// `x` are 0 (the tail is a few values: a few draws hold all the weight).
double generalized_pareto_shape(std::vector<double> x, double* scale = nullptr);

// n indices in 0..size-1 by systematic resampling of normalised `weights`
// (each index appears floor or ceil of n w times), for equally weighted draws.
std::vector<int64_t> systematic_resample(const std::vector<double>& weights, int64_t n, double uniform);

}  // namespace bfhpo::inference
