// Calibration term of the CalibratedApproximator (Falkiewicz et al. 2023,
// "Calibrating Neural Simulation-Based Inference with Differentiable Coverage
// Probability"): loss = NLL + weight * calibration_penalty.
//
// Rank of row i: alpha_i = fraction of posterior samples theta_ij ~ q(.|c_i)
// with log q(theta_ij|c_i) > log q(theta*_i|c_i), i.e. the credibility level of
// the smallest highest-density region of q that contains the true theta*_i.
// For a calibrated posterior alpha ~ U(0, 1). The indicator is a
// straight-through estimator: the forward is the hard indicator, the backward
// is the gradient of sigmoid((log q_ij - log q*_i) / ste_temperature).
//
// The ranks, sorted, are compared with the uniform grid k / (N + 1),
// k = 1..N (the expected k-th order statistic of N uniforms):
//   two-sided:    mean((alpha_sorted - grid)^2)
//   conservative: mean(relu(alpha_sorted - grid)^2)
// alpha_sorted above the grid means the true parameters fall in regions of
// low q more often than nominal: the HPD regions are too small (coverage below
// nominal, over-confidence), which the conservative mode penalises. Below the
// grid means too wide (under-confidence), penalised only in two-sided mode.
//
// Memory: the samples are drawn under no-grad (stop-gradient samples) and
// mapped through the flow log_prob_chunk_size samples per row at a time; their
// log-probs are evaluated in chunks of the same size, each chunk through
// checkpoint(), so sampling and backward hold one chunk's flow activations at
// a time: peak memory scales with the chunk, not with n_post_samples (only
// the [N, n_post_samples, D] samples and [N, n_post_samples] ranks do).
// Value and gradients do not depend on the chunk size.
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/coupling_flow.hpp"

#include <torch/torch.h>

namespace bfhpo::models {

// theta [N, D] true parameters (in the flow's space), context [N, C]. Gradients
// reach the flow's parameters and the context. Draws from the global torch RNG.
torch::Tensor calibration_penalty(CouplingFlow& flow, const torch::Tensor& theta,
                                  const torch::Tensor& context, const CalibrationSpec& spec);

// The rank alpha_i above of every row: true_log_prob [N], sample_log_prob
// [N, S] -> [N]. Forward the hard fraction, backward the sigmoid relaxation's
// gradient with temperature ste_temperature (> 0).
torch::Tensor straight_through_ranks(const torch::Tensor& true_log_prob, const torch::Tensor& sample_log_prob,
                                     double ste_temperature);

// The rank-and-compare step alone: true_log_prob [N], sample_log_prob [N, S].
// Uses spec.conservative and spec.ste_temperature.
torch::Tensor rank_calibration_penalty(const torch::Tensor& true_log_prob,
                                       const torch::Tensor& sample_log_prob, const CalibrationSpec& spec);

}  // namespace bfhpo::models
