// Building blocks as TORCH_MODULEs.
// Mlp: Linear layers of the given widths with an activation and dropout
// between hidden layers; with `residual`, a hidden layer whose input and
// output widths match adds its input. The last layer is linear:
// forward(x) == output_layer()(hidden(x)), so a caller that averages the
// outputs over rows can average hidden(x) first and apply the (affine) last
// layer to the mean.
// RunningStandardization: per-feature Welford mean/variance over every row
// seen in training mode (frozen in eval mode); forward maps x to
// (x - mean) / std, inverse maps back; log_det_jacobian = -sum(log std).
#pragma once

#include "models/networks/activation.hpp"

#include <vector>

#include <torch/torch.h>

namespace bfhpo::models {

struct MlpOptions {
  int64_t in_dim = 1;
  std::vector<int64_t> widths;  // hidden widths, then the output width last
  Activation activation = Activation::silu;
  double dropout = 0.0;
  bool residual = false;
};

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(MlpOptions options);
  torch::Tensor forward(torch::Tensor x);
  // forward(cat({x, shared.repeat_interleave(group, 0)}, 1)) without the
  // repeat: x [G * group, a], shared [G, in_dim - a], each shared row the
  // last inputs of `group` consecutive rows of x; its share of the first
  // layer is computed once a row of shared (a flow's context, shared by the
  // draws of one item). Not for a residual Mlp.
  torch::Tensor forward_shared(const torch::Tensor& x, const torch::Tensor& shared, int64_t group);
  // Every layer but the last: [..., in_dim] -> [..., the last hidden width] (x itself without hidden layers).
  torch::Tensor hidden(torch::Tensor x);
  torch::nn::Linear& output_layer() { return layers_.back(); }

 private:
  // Layers first.. but the last, each with its activation and dropout, from the input of layer `first`.
  torch::Tensor hidden_from(size_t first, torch::Tensor x);
  // The activation and dropout a hidden layer applies to its output `pre_activation`.
  torch::Tensor activate_layer(const torch::Tensor& pre_activation);

  MlpOptions options_;
  std::vector<torch::nn::Linear> layers_;
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Mlp);

class RunningStandardizationImpl : public torch::nn::Module {
 public:
  explicit RunningStandardizationImpl(int64_t dim, double epsilon = 1e-6);
  // x: [..., dim]; updates the statistics first when training.
  torch::Tensor forward(torch::Tensor x);
  torch::Tensor inverse(const torch::Tensor& z) const;
  torch::Tensor log_det_jacobian() const;
  torch::Tensor mean() const { return mean_; }
  torch::Tensor std() const;

 private:
  double epsilon_;
  torch::Tensor count_, mean_, m2_;
};
TORCH_MODULE(RunningStandardization);

}  // namespace bfhpo::models
