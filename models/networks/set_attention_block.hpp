// SetTransformer self-attention block (Lee et al. 2019, "SAB") over a set of
// elements x [B, N, width]: h = LayerNorm(x + MultiheadAttention(x, x, x)),
// out = LayerNorm(h + Mlp(h)) with a feed-forward Mlp of one hidden layer of
// `width`. No positional information: permuting the N elements permutes the
// output the same way.
#pragma once

#include "models/networks/mlp.hpp"

#include <torch/torch.h>

namespace bfhpo::models {

struct SetAttentionBlockOptions {
  int64_t width = 64;
  int64_t heads = 4;  // must divide width
  double dropout = 0.0;
  Activation activation = Activation::silu;
};

class SetAttentionBlockImpl : public torch::nn::Module {
 public:
  explicit SetAttentionBlockImpl(SetAttentionBlockOptions options);
  torch::Tensor forward(const torch::Tensor& x);  // [B, N, width] -> [B, N, width]

 private:
  torch::nn::MultiheadAttention attention_{nullptr};
  torch::nn::LayerNorm norm_attention_{nullptr};
  Mlp feed_forward_{nullptr};
  torch::nn::LayerNorm norm_feed_forward_{nullptr};
};
TORCH_MODULE(SetAttentionBlock);

}  // namespace bfhpo::models
