// Each item's graded logistic curve fitted to a response matrix by marginal
// maximum likelihood: a feature of the summary network, computed from the
// data alone (no parameters, no gradient).
//
//   P(y_pj >= k | theta) = sigmoid(a_j theta + d_jk), k = 1..K-1,
//   theta ~ N(0, 1) on kItemFitNodes (approximator_spec.hpp) equally spaced
//   nodes in [-4, 4].
//
// The 2PL for binary items, the graded response model for K > 2. EM
// (Bock & Aitkin 1981), batched over the B data sets: the E-step weighs each
// person's nodes by the likelihood of their answered cells; the M-step takes
// one Fisher scoring step on each item's expected log-likelihood
// sum_q,k n_qk log P(y = k | theta_q) (n: the expected persons at node q in
// category k) with a weak ridge (a about 1, d about 0) that keeps an item
// everyone answers alike finite; the intercepts stay ordered.
// kItemFitIterations rounds from a = 1 and d_k from the category shares.
//
// Why: the cells' features carry an item's discrimination through moments
// (the rest score's covariance with the response), and on real data, which
// no model describes exactly, moments and the likelihood disagree: a
// network given only the former follows them away from the posterior that
// Stan computes from the likelihood. The fit is the likelihood's answer
// (bench/README.md, "The item fit").
//
// responses [B, P, J] in {0..K-1}, mask [B, P, J] (1 observed, 0 missing) ->
// [B, J, K] in the responses' dtype: log a_j, then b_jk = -d_jk / a_j for
// k = 1..K-1 (a clamped to [0.05, 8], b to [-10, 10]). An item nobody
// answered gets the starting values. The products over persons in float32,
// the rest in float64.
#pragma once

#include "models/approximator_spec.hpp"

#include <torch/torch.h>

namespace bfhpo::models {

inline constexpr int64_t kItemFitIterations = 20;
// The ridge: kItemFitRidgeSlope / 2 (a - 1)^2 + kItemFitRidgeIntercept / 2 d^2 on each item, a prior of sd 1.4
// on the slope and 5 on the intercepts: beside the information of a few dozen persons, nothing.
inline constexpr double kItemFitRidgeSlope = 0.5;
inline constexpr double kItemFitRidgeIntercept = 0.04;
// The starting intercepts: a share's marginal logit is the intercept shrunk by about sqrt(1 + 0.35 a^2), at
// a = 1 by 1.16.
inline constexpr double kItemFitInterceptFromShare = 1.16;

torch::Tensor fit_items(const torch::Tensor& responses, const torch::Tensor& mask, int64_t n_categories);

}  // namespace bfhpo::models
