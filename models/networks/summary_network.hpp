// Summary network for a persons x items binary response matrix [B, P, J].
// Exchangeable over persons and over items.
//
//   per-cell features [B, P, J, F]: response y_pj, the person's raw score
//     (mean over items), the item's p-value (mean over persons), and y_pj
//     centred by the person's raw score
//   per-item stage (DeepSet over persons, per item): phi = Mlp(F -> cell_mlp
//     hidden -> cell_dim) on every cell, mean over persons -> [B, J, cell_dim],
//     then a Linear to embed_dim (applied once the chunks are joined). Phi
//     holds the B*P*J*width activations and runs over chunks of
//     `item_chunk_size` items; with gradient checkpointing each chunk is a
//     custom autograd Function that runs forward under no-grad and recomputes
//     in backward (RNG state restored so dropout draws the same mask).
//   across items: `attention_layers` SetTransformer blocks (multi-head self
//     attention + LayerNorm + feed-forward + LayerNorm) of width embed_dim.
//   outputs: per-item context [B, J, embed_dim] and a global summary
//     [B, summary_dim] (mean over items, then an Mlp with one hidden layer of
//     embed_dim).
//
// Chunked and unchunked, checkpointed and not, give the same outputs and the
// same gradients (up to float rounding).
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/mlp.hpp"

#include <torch/torch.h>

#include <optional>

namespace bfhpo::models {

struct SummaryOutput {
  torch::Tensor item_context;  // [B, J, embed_dim]
  torch::Tensor global;        // [B, summary_dim]
  // [B, J, embed_dim + summary_dim]: item context with the global summary appended to every item.
  torch::Tensor per_item_condition() const;
};

class SummaryNetworkImpl : public torch::nn::Module {
 public:
  SummaryNetworkImpl(SummarySpec spec, MemoryConfig memory = {});
  SummaryOutput forward(const torch::Tensor& responses);  // responses [B, P, J] in {0, 1}

  const SummarySpec& spec() const { return spec_; }
  const MemoryConfig& memory_config() const { return memory_; }
  void set_memory_config(MemoryConfig memory);

  static constexpr int64_t n_cell_features = 4;

 private:
  // DeepSet over persons for a chunk of items: responses [B, P, c] and the
  // persons' raw scores over all J items [B, P] -> [B, c, cell_dim].
  torch::Tensor pool_persons(const torch::Tensor& responses, const torch::Tensor& person_score);
  torch::Tensor per_item_stage(const torch::Tensor& responses);  // [B, P, J] -> [B, J, cell_dim]

  SummarySpec spec_;
  MemoryConfig memory_;
  Mlp phi_{nullptr};
  torch::nn::Linear item_projection_{nullptr};
  torch::nn::ModuleList attention_blocks_{nullptr};
  Mlp global_mlp_{nullptr};
};
TORCH_MODULE(SummaryNetwork);

// Seed API name: sets the per-item stage's chunk and checkpointing.
void set_summary_memory_config(SummaryNetwork& summary_net, std::optional<int64_t> item_chunk_size,
                               bool gradient_checkpointing);

}  // namespace bfhpo::models
