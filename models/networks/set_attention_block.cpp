#include "models/networks/set_attention_block.hpp"

#include <stdexcept>

namespace bfhpo::models {

SetAttentionBlockImpl::SetAttentionBlockImpl(SetAttentionBlockOptions options) {
  if (options.heads <= 0 || options.width % options.heads != 0) {
    throw std::invalid_argument("SetAttentionBlock: heads must divide width");
  }
  attention_ = register_module(
      "attention", torch::nn::MultiheadAttention(
                       torch::nn::MultiheadAttentionOptions(options.width, options.heads)
                           .dropout(options.dropout)));
  norm_attention_ = register_module(
      "norm_attention", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
  feed_forward_ = register_module(
      "feed_forward", Mlp(MlpOptions{options.width, {options.width, options.width},
                                     options.activation, options.dropout, false}));
  norm_feed_forward_ = register_module(
      "norm_feed_forward", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
}

torch::Tensor SetAttentionBlockImpl::forward(const torch::Tensor& x) {
  // LibTorch's MultiheadAttention takes [N, B, width].
  const auto seq = x.transpose(0, 1);
  const auto attended = std::get<0>(attention_->forward(
      seq, seq, seq, /*key_padding_mask=*/torch::Tensor(), /*need_weights=*/false));
  const auto h = norm_attention_(x + attended.transpose(0, 1));
  return norm_feed_forward_(h + feed_forward_(h));
}

}  // namespace bfhpo::models
