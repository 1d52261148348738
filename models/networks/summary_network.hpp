// Summary network for a persons x items response matrix [B, P, J] with a
// mask of the observed cells. Exchangeable over persons and over items.
//
//   per-cell features [B, P, J, F], F = n_cell_features(K) = (K - 1) + 8, with
//     r_pj = y_pj / (K - 1) the response scaled to [0, 1] and m_pj the mask
//     (every feature is 0 on a missing cell, where it is one of the last):
//     [y_pj >= k] for k = 1..K-1 (the response itself for binary items), the
//     person's score (mean r over the items they answered), the item's
//     p-value (mean r over the persons who answered it), r_pj centred by the
//     person's score, the share of items the person answered, the share of
//     persons who answered the item, z_pj the person's rest score (mean r
//     over the other items they answered) standardized over the persons who
//     answered item j, (r_pj - p-value_j) z_pj, and log(n_j) / log(1000)
//     of the n_j persons who answered item j. The product and z carry the
//     discrimination: the mean of the product over persons is the item-rest
//     covariance in rest-score sd units, which a mean of phi over persons
//     otherwise has to learn to form from the raw score (bench/README.md,
//     posterior quality, measures the difference). The last carries how many
//     persons there are, which a mean over persons and the answered shares
//     otherwise hide: without it the posterior cannot contract with more
//     persons (bench/person_range.sh measured half Stan's sd at 100 persons
//     for a network trained on 100 to 1,000).
//   per-item stage (DeepSet over persons, per item): phi = Mlp(F -> cell_mlp
//     hidden -> cell_dim) on every cell, masked mean over the persons who
//     answered the item -> [B, J, cell_dim], then a Linear to embed_dim
//     (applied once the chunks are joined). Computed as: phi's hidden
//     layers on every cell, their masked mean over persons, phi's last
//     (affine) layer on the mean -- the same function, with the last
//     layer's matmuls over B*J rows instead of B*P*J. Phi holds the
//     B*P*J*width activations and runs over chunks of `item_chunk_size`
//     items, and within a chunk over chunks of `person_chunk_size` persons
//     (pieces) whose pooled sums add up (the items' p-values and rest-score
//     means and sds, which the cell features need, are taken over all
//     persons first); with gradient checkpointing each piece is a custom
//     autograd Function that runs forward under no-grad and recomputes in
//     backward (RNG state restored so dropout draws the same mask) -- except
//     the last of several pieces, whose activations backward uses first:
//     kept, not recomputed.
//   item fit (spec.item_fit): each item's curve fitted by marginal maximum
//     likelihood [B, J, K] (models/networks/item_fit.hpp), appended to the
//     pooled phi before the Linear to embed_dim and to the flow's condition.
//   across items: `attention_layers` SetTransformer blocks (multi-head self
//     attention + LayerNorm + feed-forward + LayerNorm) of width embed_dim.
//   outputs: per-item context [B, J, embed_dim], a global summary
//     [B, summary_dim] (mean over items, then an Mlp with one hidden layer of
//     embed_dim) and, with spec.item_fit, the item fit [B, J, K].
//
// Chunked and unchunked, checkpointed and not, give the same outputs and the
// same gradients (up to float rounding). A missing cell changes nothing but
// the counts: its response value is never read.
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/mlp.hpp"

#include <torch/torch.h>

#include <optional>

namespace bfhpo::models {

struct ItemStatistics;  // summary_network.cpp

struct SummaryOutput {
  torch::Tensor item_context;  // [B, J, embed_dim]
  torch::Tensor global;        // [B, summary_dim]
  torch::Tensor item_fit;      // [B, J, K] with SummarySpec::item_fit, else undefined
  // [B, J, embed_dim + summary_dim (+ K)]: item context with the global summary (and the item fit) appended.
  torch::Tensor per_item_condition() const;
};

class SummaryNetworkImpl : public torch::nn::Module {
 public:
  // n_categories K: responses take the values 0..K-1 (2: binary items).
  SummaryNetworkImpl(SummarySpec spec, MemoryConfig memory = {}, int64_t n_categories = 2);
  // responses [B, P, J] in {0..K-1}; mask [B, P, J] 1 observed / 0 missing,
  // undefined: every cell observed.
  SummaryOutput forward(const torch::Tensor& responses, const torch::Tensor& mask = {});

  const SummarySpec& spec() const { return spec_; }
  const MemoryConfig& memory_config() const { return memory_; }
  void set_memory_config(MemoryConfig memory);

  int64_t n_categories() const { return n_categories_; }

 private:
  // For a chunk of c items and p of their persons: responses and mask
  // [B, c, p], the items' statistics over all n_persons persons, and the p
  // persons' summed scaled responses and answered counts over all n_items
  // items [B, p] -> the masked sum over the p persons of phi's hidden layers
  // [B, c, hidden width].
  torch::Tensor person_chunk_sum(const torch::Tensor& responses, const torch::Tensor& mask,
                                 const ItemStatistics& stats, const torch::Tensor& person_sum,
                                 const torch::Tensor& person_count, int64_t n_items, int64_t n_persons);
  // [B, P, J] -> [B, J, cell_dim]
  torch::Tensor per_item_stage(const torch::Tensor& responses, const torch::Tensor& mask);

  SummarySpec spec_;
  MemoryConfig memory_;
  int64_t n_categories_;
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
