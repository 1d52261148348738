// Activation normalisation (Kingma & Dhariwal 2018, Glow): a learned per-dim
// affine map y = x * exp(log_scale) + shift. The first forward in training
// mode on a batch of at least two rows sets log_scale and shift so that batch
// comes out with zero mean and unit variance per dim; the "initialized" flag
// is a buffer, so loaded weights are never re-initialised. Before that the map
// is the identity.
#pragma once

#include <torch/torch.h>

#include <utility>

namespace bfhpo::models {

class ActNormImpl : public torch::nn::Module {
 public:
  explicit ActNormImpl(int64_t dim);

  // x [N, D] -> y [N, D] and log|det dy/dx| (a scalar: the same for every row).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);
  // y [N, D] -> x [N, D] and log|det dx/dy| (minus forward's).
  std::pair<torch::Tensor, torch::Tensor> inverse(const torch::Tensor& y);
  // Whether the data-dependent initialisation has happened (or came with loaded weights).
  bool initialized() const { return initialized_.item<double>() != 0.0; }

 private:
  void initialize_from(const torch::Tensor& x);

  torch::Tensor log_scale_, shift_, initialized_;
};
TORCH_MODULE(ActNorm);

}  // namespace bfhpo::models
