// Dual conditional affine coupling over x = (x1, x2), x1 the first
// floor(D/2) dims: x2 <- x2 * exp(s1) + t1 with (s1, t1) = subnet1(x1, context),
// then x1 <- x1 * exp(s2) + t2 with (s2, t2) = subnet2(x2_new, context), so
// every dim is transformed once. Log-scales are soft-clamped to (-clamp, clamp)
// as clamp * 2/pi * atan(s / clamp). The subnets' output layers start at zero,
// so a fresh coupling is the identity. With D = 1 the first half is empty:
// the one dim is scaled and shifted by subnet1(context) and there is no
// subnet2 (a flow of such layers is affine in theta: a Gaussian posterior
// whose mean and scale depend on the context).
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/mlp.hpp"

#include <torch/torch.h>

#include <utility>

namespace bfhpo::models {

class DualAffineCouplingImpl : public torch::nn::Module {
 public:
  DualAffineCouplingImpl(int64_t dim, int64_t context_dim, const FlowSpec& spec);

  // x [N, D], context [N, C] -> y [N, D] and log|det dy/dx| [N].
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x, const torch::Tensor& context);
  // y [N, D], context [N / group, C], each row the context of `group`
  // consecutive rows of y (a flow's draws of one item) -> x [N, D] and
  // log|det dx/dy| [N] (minus forward's at x).
  std::pair<torch::Tensor, torch::Tensor> inverse(const torch::Tensor& y, const torch::Tensor& context,
                                                  int64_t group = 1);

 private:
  // (log-scale, shift) for the half that `conditioner` conditions, its rows `group` to a context row.
  std::pair<torch::Tensor, torch::Tensor> scale_shift(Mlp& subnet, const torch::Tensor& conditioner,
                                                      const torch::Tensor& context, int64_t group = 1) const;

  int64_t first_half_;
  double clamp_;
  Mlp subnet1_{nullptr}, subnet2_{nullptr};
};
TORCH_MODULE(DualAffineCoupling);

}  // namespace bfhpo::models
