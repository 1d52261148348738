#include "models/networks/summary_network.hpp"

#include "models/networks/checkpoint.hpp"
#include "models/networks/item_fit.hpp"
#include "models/networks/set_attention_block.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace bfhpo::models {
namespace {

// The persons-count feature is log(answered) / log(1000): 1 at a thousand persons.
constexpr double kLogThousand = 6.907755278982137;

}  // namespace

// What the cell features of a chunk of c items need from all its persons
// [B, c, 1]: how many answered each item, its p-value, and the mean and sd
// of its respondents' rest scores. Reads only the data: no gradient.
struct ItemStatistics {
  torch::Tensor answered, p_value, rest_mean, rest_sd;
};

namespace {

// The rest score (the person's mean scaled response over the other items
// they answered) of every cell of `scaled` [B, c, P], from the persons'
// summed scaled responses `sum` and answered counts `count` [B, 1, P].
torch::Tensor rest_score(const torch::Tensor& scaled, const torch::Tensor& mask, const torch::Tensor& sum,
                         const torch::Tensor& count) {
  return (sum - scaled) / (count - mask).clamp_min(1.0);
}

ItemStatistics item_statistics(int64_t n_categories, const torch::Tensor& responses, const torch::Tensor& mask,
                               const torch::Tensor& person_sum, const torch::Tensor& person_count) {
  const auto scaled = responses * mask / static_cast<double>(n_categories - 1);
  ItemStatistics stats;
  stats.answered = mask.sum(2, /*keepdim=*/true);
  const auto answered = stats.answered.clamp_min(1.0);
  stats.p_value = scaled.sum(2, /*keepdim=*/true) / answered;
  const auto rest = rest_score(scaled, mask, person_sum.unsqueeze(1), person_count.unsqueeze(1));
  stats.rest_mean = (rest * mask).sum(2, /*keepdim=*/true) / answered;
  const auto rest_centred = (rest - stats.rest_mean) * mask;
  stats.rest_sd = (rest_centred.square().sum(2, /*keepdim=*/true) / answered + 1e-4).sqrt();
  return stats;
}

// The stacked per-cell features [B, c, p, F] of a chunk of c items and p of
// their persons (summary_network.hpp lists them) from its responses and mask
// [B, c, p], the items' statistics over all their persons, and `person_sum`
// and `person_count` [B, p], those persons' summed scaled responses and
// answered items over all n_items items; `n_persons` all the items' persons.
torch::Tensor cell_features(int64_t n_categories, const torch::Tensor& responses, const torch::Tensor& mask,
                            const ItemStatistics& stats, const torch::Tensor& person_sum,
                            const torch::Tensor& person_count, int64_t n_items, int64_t n_persons) {
  const auto scaled = responses * mask / static_cast<double>(n_categories - 1);
  const auto sum = person_sum.unsqueeze(1), count = person_count.unsqueeze(1);
  const auto score = sum / count.clamp_min(1.0);
  // The rest score, standardized over the persons who answered the item.
  const auto rest_z = (rest_score(scaled, mask, sum, count) - stats.rest_mean) * mask / stats.rest_sd;
  std::vector<torch::Tensor> features;
  for (int64_t k = 1; k < n_categories; ++k) features.push_back(responses.ge(k).to(mask.dtype()) * mask);
  features.push_back(score.expand_as(responses));
  features.push_back(stats.p_value.expand_as(responses));
  features.push_back((scaled - score) * mask);
  features.push_back((count / static_cast<double>(n_items)).expand_as(responses));
  features.push_back((stats.answered / static_cast<double>(n_persons)).expand_as(responses));
  features.push_back(rest_z);
  features.push_back((scaled - stats.p_value) * rest_z);
  features.push_back((stats.answered.clamp_min(1.0).log() / kLogThousand).expand_as(responses));
  return torch::stack(features, -1);
}

// The sum over persons of phi's hidden layer [B, c, P, H] weighted by the
// mask [B, c, P] -> [B, c, H]: forward one batched product; backward the mask
// times the incoming gradient broadcast over persons, one elementwise pass
// (the product's own backward, an outer product per item through the BLAS,
// took twice as long). Keeps the mask only: the hidden layer is not kept.
class MaskedPersonSum : public torch::autograd::Function<MaskedPersonSum> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& hidden,
                               const torch::Tensor& mask) {
    ctx->save_for_backward({mask});
    return torch::matmul(mask.unsqueeze(2), hidden).squeeze(2);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto mask = ctx->get_saved_variables()[0];
    return {mask.unsqueeze(-1) * grad_outputs[0].unsqueeze(2), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor SummaryOutput::per_item_condition() const {
  const auto global_per_item =
      global.unsqueeze(1).expand({global.size(0), item_context.size(1), global.size(1)});
  if (!item_fit.defined()) return torch::cat({item_context, global_per_item}, -1);
  return torch::cat({item_context, global_per_item, item_fit}, -1);
}

SummaryNetworkImpl::SummaryNetworkImpl(SummarySpec spec, MemoryConfig memory, int64_t n_categories)
    : spec_(std::move(spec)), n_categories_(n_categories) {
  set_memory_config(memory);
  if (n_categories_ < 2) throw std::invalid_argument("SummaryNetwork: n_categories must be >= 2");
  if (spec_.cell_mlp_depth < 0) throw std::invalid_argument("SummaryNetwork: cell_mlp_depth < 0");
  std::vector<int64_t> phi_widths(static_cast<size_t>(spec_.cell_mlp_depth), spec_.cell_mlp_width);
  phi_widths.push_back(spec_.cell_dim);
  phi_ = register_module("phi", Mlp(MlpOptions{n_cell_features(n_categories_), phi_widths, spec_.activation,
                                               spec_.dropout, false}));
  item_projection_ =
      register_module("item_projection", torch::nn::Linear(spec_.cell_dim + (spec_.item_fit ? n_categories_ : 0),
                                                           spec_.embed_dim));
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
  if (memory.person_chunk_size && *memory.person_chunk_size <= 0) {
    throw std::invalid_argument("SummaryNetwork: person_chunk_size must be positive, got " +
                                std::to_string(*memory.person_chunk_size));
  }
  memory_ = memory;
}

torch::Tensor SummaryNetworkImpl::person_chunk_sum(const torch::Tensor& responses, const torch::Tensor& mask,
                                                   const ItemStatistics& stats, const torch::Tensor& person_sum,
                                                   const torch::Tensor& person_count, int64_t n_items,
                                                   int64_t n_persons) {
  const auto features =
      cell_features(n_categories_, responses, mask, stats, person_sum, person_count, n_items, n_persons);
  return MaskedPersonSum::apply(phi_->hidden(features), mask);
}

torch::Tensor SummaryNetworkImpl::per_item_stage(const torch::Tensor& responses, const torch::Tensor& mask) {
  const int64_t n_persons = responses.size(1), n_items = responses.size(2);
  const auto person_count = mask.sum(2);
  const auto person_sum = (responses * mask).sum(2) / static_cast<double>(n_categories_ - 1);
  const int64_t item_chunk = std::min(memory_.item_chunk_size.value_or(n_items), n_items);
  const int64_t person_chunk = std::min(memory_.person_chunk_size.value_or(n_persons), n_persons);
  const auto phi_params = phi_->parameters();
  // Items before persons [B, J, P]: a chunk's cells are contiguous rows, phi's activations [B, c, P, width].
  const auto response_chunks = responses.transpose(1, 2).contiguous().split(item_chunk, 1);
  const auto mask_chunks = mask.transpose(1, 2).contiguous().split(item_chunk, 1);
  const auto person_sum_chunks = person_sum.split(person_chunk, 1);
  const auto person_count_chunks = person_count.split(person_chunk, 1);
  // Of several pieces (an item chunk's person chunk), the last one is not checkpointed: backward reaches it
  // first, so its recomputation would redo the forward just done. Its activations stay from its forward to
  // its backward instead (one piece's, as a recomputed piece holds; torch.utils.checkpoint_sequential leaves
  // its last segment so too).
  const size_t n_pieces = response_chunks.size() * person_sum_chunks.size();
  size_t piece = 0;
  std::vector<torch::Tensor> pooled;
  for (size_t i = 0; i < response_chunks.size(); ++i) {
    const auto stats =
        item_statistics(n_categories_, response_chunks[i], mask_chunks[i], person_sum, person_count);
    const auto response_pieces = response_chunks[i].split(person_chunk, 2);
    const auto mask_pieces = mask_chunks[i].split(person_chunk, 2);
    const CheckpointedFn fn = [this, stats, n_items, n_persons](const std::vector<torch::Tensor>& in) {
      return person_chunk_sum(in[0], in[1], stats, in[2], in[3], n_items, n_persons);
    };
    torch::Tensor hidden_sum;
    for (size_t k = 0; k < response_pieces.size(); ++k, ++piece) {
      const std::vector<torch::Tensor> inputs{response_pieces[k], mask_pieces[k], person_sum_chunks[k],
                                              person_count_chunks[k]};
      const bool recomputed = memory_.gradient_checkpointing && (piece + 1 < n_pieces || n_pieces == 1);
      const auto sum = recomputed ? checkpoint(fn, inputs, phi_params) : fn(inputs);
      hidden_sum = hidden_sum.defined() ? hidden_sum + sum : sum;
    }
    // phi's last layer is affine, so the mean of its outputs is the layer applied to the mean; an item nobody
    // answered pools to 0, as the mean of no outputs.
    const auto& output_layer = phi_->output_layer();
    pooled.push_back(torch::linear(hidden_sum / stats.answered.clamp_min(1.0), output_layer->weight) +
                     output_layer->bias * stats.answered.clamp_max(1.0));
  }
  return torch::cat(pooled, 1);
}

SummaryOutput SummaryNetworkImpl::forward(const torch::Tensor& responses, const torch::Tensor& mask) {
  if (responses.dim() != 3 || responses.size(1) == 0 || responses.size(2) == 0) {
    throw std::invalid_argument("SummaryNetwork: responses must be [B, P, J] with P, J > 0");
  }
  if (mask.defined() && mask.sizes() != responses.sizes())
    throw std::invalid_argument("SummaryNetwork: mask must have the responses' shape [B, P, J]");
  const auto dtype = item_projection_->weight.dtype();
  const auto observed = mask.defined() ? mask.to(dtype) : torch::ones_like(responses, dtype);
  const auto scored = responses.to(dtype);
  // The fit first: its temporaries (one-hot categories, node weights) are gone before phi's activations arrive.
  const auto item_fit = spec_.item_fit ? fit_items(scored, observed, n_categories_) : torch::Tensor();
  auto pooled = per_item_stage(scored, observed);
  if (item_fit.defined()) pooled = torch::cat({pooled, item_fit}, -1);
  auto h = item_projection_(pooled);
  for (const auto& block : *attention_blocks_) h = block->as<SetAttentionBlockImpl>()->forward(h);
  return SummaryOutput{h, global_mlp_(h.mean(1)), item_fit};
}

void set_summary_memory_config(SummaryNetwork& summary_net, std::optional<int64_t> item_chunk_size,
                               bool gradient_checkpointing) {
  MemoryConfig memory = summary_net->memory_config();
  memory.item_chunk_size = item_chunk_size;
  memory.gradient_checkpointing = gradient_checkpointing;
  summary_net->set_memory_config(memory);
}

}  // namespace bfhpo::models
