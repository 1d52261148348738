#include "models/networks/summary_network.hpp"

#include "models/networks/checkpoint.hpp"
#include "models/networks/set_attention_block.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bfhpo::models {

torch::Tensor SummaryOutput::per_item_condition() const {
  const auto global_per_item =
      global.unsqueeze(1).expand({global.size(0), item_context.size(1), global.size(1)});
  return torch::cat({item_context, global_per_item}, -1);
}

SummaryNetworkImpl::SummaryNetworkImpl(SummarySpec spec, MemoryConfig memory)
    : spec_(std::move(spec)) {
  set_memory_config(memory);
  if (spec_.cell_mlp_depth < 0) throw std::invalid_argument("SummaryNetwork: cell_mlp_depth < 0");
  std::vector<int64_t> phi_widths(static_cast<size_t>(spec_.cell_mlp_depth), spec_.cell_mlp_width);
  phi_widths.push_back(spec_.cell_dim);
  phi_ = register_module("phi", Mlp(MlpOptions{n_cell_features, phi_widths, spec_.activation,
                                               spec_.dropout, false}));
  item_projection_ =
      register_module("item_projection", torch::nn::Linear(spec_.cell_dim, spec_.embed_dim));
  attention_blocks_ = register_module("attention_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < spec_.attention_layers; ++i) {
    attention_blocks_->push_back(SetAttentionBlock(SetAttentionBlockOptions{
        spec_.embed_dim, spec_.attention_heads, spec_.dropout, spec_.activation}));
  }
  global_mlp_ = register_module(
      "global_mlp", Mlp(MlpOptions{spec_.embed_dim, {spec_.embed_dim, spec_.summary_dim},
                                   spec_.activation, spec_.dropout, false}));
}

void SummaryNetworkImpl::set_memory_config(MemoryConfig memory) {
  if (memory.item_chunk_size && *memory.item_chunk_size <= 0) {
    throw std::invalid_argument("SummaryNetwork: item_chunk_size must be positive, got " +
                                std::to_string(*memory.item_chunk_size));
  }
  memory_ = memory;
}

torch::Tensor SummaryNetworkImpl::pool_persons(const torch::Tensor& responses,
                                               const torch::Tensor& person_score) {
  const auto score = person_score.unsqueeze(2).expand_as(responses);
  const auto p_value = responses.mean(1, /*keepdim=*/true).expand_as(responses);
  const auto cells = torch::stack({responses, score, p_value, responses - score}, -1);
  return phi_(cells).mean(1);
}

torch::Tensor SummaryNetworkImpl::per_item_stage(const torch::Tensor& responses) {
  const auto person_score = responses.mean(2);
  const int64_t n_items = responses.size(2);
  const int64_t chunk = std::min(memory_.item_chunk_size.value_or(n_items), n_items);
  const CheckpointedFn fn = [this](const std::vector<torch::Tensor>& in) {
    return pool_persons(in[0], in[1]);
  };
  const auto phi_params = phi_->parameters();
  std::vector<torch::Tensor> pooled;
  for (const auto& items : responses.split(chunk, 2)) {
    pooled.push_back(memory_.gradient_checkpointing
                         ? checkpoint(fn, {items, person_score}, phi_params)
                         : fn({items, person_score}));
  }
  return torch::cat(pooled, 1);
}

SummaryOutput SummaryNetworkImpl::forward(const torch::Tensor& responses) {
  if (responses.dim() != 3 || responses.size(1) == 0 || responses.size(2) == 0) {
    throw std::invalid_argument("SummaryNetwork: responses must be [B, P, J] with P, J > 0");
  }
  auto h = item_projection_(per_item_stage(responses.to(item_projection_->weight.dtype())));
  for (const auto& block : *attention_blocks_) h = block->as<SetAttentionBlockImpl>()->forward(h);
  return SummaryOutput{h, global_mlp_(h.mean(1))};
}

void set_summary_memory_config(SummaryNetwork& summary_net, std::optional<int64_t> item_chunk_size,
                               bool gradient_checkpointing) {
  summary_net->set_memory_config(MemoryConfig{item_chunk_size, gradient_checkpointing});
}

}  // namespace bfhpo::models
