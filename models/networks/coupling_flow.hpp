// Conditional affine coupling flow over a param_dim-dimensional target,
// conditioned on a context vector per row. Each of `depth` layers is
//   actnorm (data-initialised on the first training batch, then learned)
//   -> a fixed permutation (seeded at construction, saved as a buffer)
//   -> a dual affine coupling: the first half conditions the second, then the
//      second the first; scale and shift come from an Mlp(half + context)
//      whose output layer is zero-initialised, so a fresh flow is the identity
//      after actnorm; log-scales soft-clamped as clamp * 2/pi * atan(s / clamp).
// Base distribution: standard normal.
// With param_dim 1 a coupling has no first half and the flow is affine in
// theta (see affine_coupling.hpp); 0 throws std::invalid_argument.
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/actnorm.hpp"
#include "models/networks/affine_coupling.hpp"

#include <torch/torch.h>

#include <utility>
#include <vector>

namespace bfhpo::models {

class CouplingFlowImpl : public torch::nn::Module {
 public:
  CouplingFlowImpl(int64_t param_dim, int64_t context_dim, FlowSpec spec, uint64_t seed = 0);

  // theta [N, D], context [N, C] -> z [N, D] and log|det dz/dtheta| [N].
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& theta, const torch::Tensor& context);
  // z [N, D], context [N, C] -> theta [N, D] (the exact inverse of forward)
  // and log|det dtheta/dz| [N] (minus forward's log-det at theta).
  std::pair<torch::Tensor, torch::Tensor> inverse(const torch::Tensor& z, const torch::Tensor& context);
  // log q(theta | context) [N].
  torch::Tensor log_prob(const torch::Tensor& theta, const torch::Tensor& context);
  // n draws per row: context [N, C] -> [N, n, D], with each draw's log q
  // [N, n] from the same pass (what log_prob gives the draws, up to float
  // rounding, at half the cost of sampling and then log_prob). Each row's
  // context enters each subnet's first layer once, not once a draw. Uses
  // `generator`'s normals (none: the global torch RNG's).
  std::pair<torch::Tensor, torch::Tensor> sample(int64_t n, const torch::Tensor& context,
                                                 c10::optional<at::Generator> generator = c10::nullopt);

  int64_t param_dim() const { return param_dim_; }
  int64_t context_dim() const { return context_dim_; }
  // Whether every actnorm has initialised itself from data (or came with loaded weights).
  bool initialized() const;

 private:
  torch::Tensor base_log_prob(const torch::Tensor& z) const;  // the standard normal's, [N]
  // inverse with context [N / group, C], a row for `group` consecutive rows of z (sample's draws of a row):
  // the context's share of each subnet's first layer is computed once a context row.
  std::pair<torch::Tensor, torch::Tensor> inverse_grouped(const torch::Tensor& z, const torch::Tensor& context,
                                                          int64_t group);

  int64_t param_dim_, context_dim_;
  FlowSpec spec_;
  std::vector<ActNorm> actnorms_;
  std::vector<torch::Tensor> permutations_, inverse_permutations_;  // int64 index buffers
  std::vector<DualAffineCoupling> couplings_;
};
TORCH_MODULE(CouplingFlow);

}  // namespace bfhpo::models
