#include "memory/estimate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

// How the estimate is taken. Every count below is a tensor the step allocates
// (float32 unless said otherwise), named after the code that allocates it;
// each tensor is mapped to device bytes by device_allocation_bytes, so CUDA's
// per-block rounding applies per tensor. Notation: B batch, P persons,
// J items, c item chunk, p person chunk (P without one), E embed_dim, H
// heads, C = E + summary_dim the flow's context width, W subnet width, D
// param_dim, M = B*J flow rows, N = B*p*c per-cell rows of one piece (an
// item chunk's person chunk).
//
// Which tensors saved for backward an op keeps (LibTorch 1.13 and 2.x):
//   Linear              its input (for the weight gradient); the output is new
//   silu / gelu         their input (the pre-activation); the output is new
//                       and saved by the next Linear: 2 tensors a hidden layer
//   relu                its output only, shared with the next Linear: 1
//   dropout (p > 0)     the noise mask and the output, the activation's output
//                       is dropped: 3 a hidden layer; p == 0 is the identity
//   masked person sum   the mask only (summary_network.cpp's MaskedPersonSum)
//   sum, cat, stack,    nothing (sizes only)
//   add, sub
//   LayerNorm           its input, mean and rstd [rows]
//   softmax, exp        their output
//
// The step's peak is the largest of these moments (the persistent terms --
// parameters, gradients, Adam states -- are alive at all of them; LibTorch
// 1.13's zero_grad keeps gradients allocated, 2.x frees them, which this
// estimate does not credit):
//   simulate   the simulator's temporaries while the batch is drawn
//   early      end of forward / start of backward: the batch, every saved
//              activation of summary, flow and calibration, and the largest
//              backward buffer of the flow or the attention blocks
//   forward    the end of the per-item stage's last piece in forward: the
//              batch, what the pieces keep and the piece's phi output
//   late       backward through the per-item stage: the batch, what the
//              per-item stage keeps, and its backward buffers (with
//              checkpointing: one piece recomputed plus its backward buffers);
//              flow, attention and calibration activations are freed by then
// The reported terms add up to the peak: `transient` is what the peak moment
// holds beyond batch + summary + flow + calibration (never negative: `early`
// holds all of them). The Adam update's temporaries (two of the largest
// parameter) and gradient clipping (one scalar a parameter) are far below
// any of these moments and are not counted.

namespace bfhpo::memory {
namespace {

constexpr double kMb = 1024.0 * 1024.0;
constexpr int64_t kFloat = 4;
constexpr int64_t kInt64 = 8;
constexpr int64_t kCpuGeneratorStateBytes = 5056;  // at::CPUGeneratorImpl::get_state()'s byte tensor

// Sums device bytes of tensors.
class Tally {
 public:
  explicit Tally(const DeviceProfile& profile) : profile_(profile) {}
  // `copies` tensors of `elements` values of `element_bytes` each.
  Tally& add(int64_t elements, int64_t copies = 1, int64_t element_bytes = kFloat) {
    if (elements > 0 && copies > 0) bytes_ += copies * device_allocation_bytes(profile_, elements * element_bytes);
    return *this;
  }
  int64_t bytes() const { return bytes_; }

 private:
  const DeviceProfile& profile_;
  int64_t bytes_ = 0;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Tensors a hidden layer of an Mlp keeps for backward (see the table above).
int64_t saved_per_hidden_layer(models::Activation activation, double dropout) {
  if (dropout > 0) return 3;
  return activation == models::Activation::relu ? 1 : 2;
}

// A Linear's weight and bias.
void add_linear(Tally& t, int64_t in, int64_t out) { t.add(in * out).add(out); }

// An Mlp's Linears: in -> widths...
void add_mlp(Tally& t, int64_t in, int64_t hidden_width, int64_t hidden_layers, int64_t out) {
  for (int64_t i = 0; i < hidden_layers; ++i) {
    add_linear(t, in, hidden_width);
    in = hidden_width;
  }
  add_linear(t, in, out);
}

// Learned parameters (those Adam and the gradients mirror), tensor by tensor.
void add_parameters(Tally& t, const models::ApproximatorSpec& spec) {
  const auto& s = spec.summary;
  const auto& f = spec.flow;
  add_mlp(t, models::n_cell_features(spec.n_categories), s.cell_mlp_width, s.cell_mlp_depth, s.cell_dim);  // phi
  add_linear(t, s.cell_dim + spec.item_fit_dim(), s.embed_dim);   // item_projection
  for (int64_t i = 0; i < s.attention_layers; ++i) {
    const int64_t e = s.embed_dim;
    t.add(3 * e * e).add(3 * e);  // MultiheadAttention in_proj_weight, in_proj_bias
    add_linear(t, e, e);          // out_proj
    t.add(e, 2);                  // norm_attention weight, bias
    add_mlp(t, e, e, 1, e);       // feed_forward
    t.add(e, 2);                  // norm_feed_forward weight, bias
  }
  add_mlp(t, s.embed_dim, s.embed_dim, 1, s.summary_dim);  // global_mlp
  const int64_t first = spec.param_dim / 2, second = spec.param_dim - first, context = spec.context_dim();
  for (int64_t k = 0; k < f.depth; ++k) {
    t.add(spec.param_dim, 2);                                        // actnorm log_scale, shift
    add_mlp(t, first + context, f.subnet_width, f.subnet_depth, 2 * second);  // subnet1
    if (first > 0) add_mlp(t, second + context, f.subnet_width, f.subnet_depth, 2 * first);  // subnet2
  }
}

// Buffers: standardization count (float64), mean, m2; per flow layer the
// actnorm "initialized" flag and the int64 permutation and its inverse.
void add_buffers(Tally& t, const models::ApproximatorSpec& spec) {
  t.add(1, 1, 8).add(spec.param_dim, 2);
  for (int64_t k = 0; k < spec.flow.depth; ++k) t.add(1).add(spec.param_dim, 2, kInt64);
}

// Saved activations of one log_prob pass of the coupling flow over `rows` rows
// with a context of `context` values a row. Per layer: the actnorm's input
// (saved by its multiply) and the permuted rows (index_select output, saved by
// the couplings' multiplies); per subnet the cat of conditioner and context
// (saved by the first Linear), the hidden layers, the clamp's atan input and
// the exp of the log-scale; the running log-determinant. The final z is saved
// by pow in log_prob.
int64_t flow_saved_bytes(const DeviceProfile& p, const models::ApproximatorSpec& spec, int64_t rows) {
  const auto& f = spec.flow;
  const int64_t d = spec.param_dim, first = d / 2, second = d - first, context = spec.context_dim();
  const int64_t per_hidden = saved_per_hidden_layer(f.activation, f.dropout);
  Tally t(p);
  for (int64_t k = 0; k < f.depth; ++k) {
    t.add(rows * d, 2);                                                    // actnorm input, permuted
    for (const auto& [in, out] : {std::pair{first, second}, std::pair{second, first}}) {
      if (out == 0) continue;  // param_dim 1: no second subnet
      t.add(rows * (in + context));                                        // cat(conditioner, context)
      t.add(rows * f.subnet_width, per_hidden * f.subnet_depth);           // hidden layers
      t.add(rows * out, 2);                                                // atan input, exp(log-scale)
      t.add(rows);                                                         // log-scale sum
    }
    t.add(rows);                                                           // log_det accumulation
  }
  t.add(rows * d);                                                         // z, saved by pow
  return t.bytes();
}

// The largest set of buffers a backward through the flow holds on top of its
// saved activations, which it frees as it goes: a gradient of the wider of a
// hidden layer and the context, and a few [rows, D] ones (measured: W + 3 a
// row at W = 64, C = 48).
int64_t flow_backward_bytes(const DeviceProfile& p, const models::ApproximatorSpec& spec, int64_t rows) {
  return Tally(p)
      .add(rows * std::max(spec.flow.subnet_width, spec.context_dim()))
      .add(rows * spec.param_dim, 2)
      .add(rows)
      .bytes();
}

// Forward of the flow under no-grad over `rows` rows (sampling or a
// checkpointed log-prob chunk): the widest moment of one subnet, its input
// and a Linear's output and activation alive together, plus the running rows.
int64_t flow_no_grad_bytes(const DeviceProfile& p, const models::ApproximatorSpec& spec, int64_t rows) {
  const auto& f = spec.flow;
  const int64_t d = spec.param_dim, context = spec.context_dim(), w = f.subnet_width;
  const int64_t cat_in = d - d / 2 + context;
  const int64_t widest = f.subnet_depth > 0 ? std::max(cat_in + 2 * w, 3 * w) : cat_in + 2 * d;
  return Tally(p).add(rows * widest).add(rows * d, 4).add(rows, 2).bytes();
}

struct SummaryMemory {
  int64_t saved = 0;          // kept for backward at the end of forward (incl. what the per-item stage keeps)
  int64_t item_stage = 0;     // the part of `saved` still alive while backward runs through the per-item stage
  int64_t attention_backward = 0;  // largest backward buffers of an attention block
  int64_t item_stage_backward = 0;  // backward buffers of a piece (+ its recomputation when checkpointed)
  int64_t item_stage_forward = 0;   // on top of item_stage at the widest moment of its forward
  int64_t condition = 0;      // the flow's context [M, C]
};

// The summary network of summary_network.cpp at [B, P, J].
SummaryMemory summary_memory(const DeviceProfile& p, const models::ApproximatorSpec& spec, const StepShape& shape) {
  const auto& s = spec.summary;
  const int64_t b = shape.batch_size, persons = shape.n_persons, items = shape.n_items;
  const int64_t chunk = std::min(spec.memory.item_chunk_size.value_or(items), items);
  const int64_t n_chunks = ceil_div(items, chunk), last_chunk = items - (n_chunks - 1) * chunk;
  const int64_t person_chunk = std::min(spec.memory.person_chunk_size.value_or(persons), persons);
  const int64_t n_person_chunks = ceil_div(persons, person_chunk);
  const int64_t last_person_chunk = persons - (n_person_chunks - 1) * person_chunk;
  const int64_t n_pieces = n_chunks * n_person_chunks;
  const int64_t per_hidden = saved_per_hidden_layer(s.activation, s.dropout);
  const int64_t width = s.cell_mlp_width, depth = s.cell_mlp_depth;

  // The per-item stage works on the responses and mask transposed to items
  // before persons, [B, J, P] copies, and on a chunk of c items at a time:
  // the items' statistics over all P persons (4 [B, c, 1], kept by every
  // chunk's graph), then for each person chunk (a piece) the cell features
  // of its N = B*p*c cells, phi's hidden layers over them, their masked sum
  // over persons, summed over the pieces, and phi's last layer on the mean.
  // Kept for backward by one piece: the stacked cell features [N, F] (input of the
  // first Linear) and the hidden layers [N, width] (per_hidden each) except
  // the last hidden layer's output, which the masked sum does not keep (its
  // backward needs only the mask, a view of the transposed one). Without
  // hidden layers phi's input needs no gradient: nothing.
  const int64_t features = models::n_cell_features(spec.n_categories);
  const int64_t last_output_unkept = per_hidden == 1 ? 0 : 1;  // relu keeps its output itself
  const auto phi_saved = [&](int64_t c, int64_t p_rows) {
    const int64_t rows = b * p_rows * c;
    if (depth == 0) return int64_t{0};
    return Tally(p).add(rows * features).add(rows * width, per_hidden * depth - last_output_unkept).bytes();
  };
  const int64_t cells = b * persons * items;
  const bool checkpointed = spec.memory.gradient_checkpointing;
  SummaryMemory m;
  Tally stage(p);
  stage.add(b * persons, 2);  // person score and answered share, used by every chunk
  stage.add(b * chunk, 4 * n_chunks);  // the items' statistics
  stage.add(b * items * (s.cell_dim + spec.item_fit_dim()));  // item_projection's input: the pooled chunks (+ fit)
  if (checkpointed) {
    stage.add(cells, 2);  // the chunks' inputs until their recomputation: the transposed responses and mask
  } else {
    if (depth > 0) stage.add(cells);  // the transposed mask, kept by the masked sums
  }
  // Every recomputed piece keeps the CPU generator's state for its
  // recomputation (models/networks/checkpoint.cpp): 5,056 bytes, in host
  // memory, which only the CPU profile counts.
  const int64_t recomputed = checkpointed ? (n_pieces > 1 ? n_pieces - 1 : 1) : 0;
  if (p.kind == DeviceKind::cpu) stage.add(kCpuGeneratorStateBytes, recomputed, 1);
  m.item_stage = stage.bytes();
  // Without checkpointing every piece's graph stays: chunking alone saves nothing.
  const auto pieces_saved = [&](int64_t c) {
    return (n_person_chunks - 1) * phi_saved(c, person_chunk) + phi_saved(c, last_person_chunk);
  };
  if (!checkpointed) m.item_stage += (n_chunks - 1) * pieces_saved(chunk) + pieces_saved(last_chunk);
  // Checkpointed with several pieces, the last piece is not recomputed: its
  // activations stay from its forward to its backward, through the end of
  // forward, while backward through the per-item stage starts with it.
  const bool keeps_last = checkpointed && n_pieces > 1;
  const int64_t kept_last = keeps_last ? phi_saved(last_chunk, last_person_chunk) : 0;
  // Forward of a piece, on top of what the pieces before keep. With grad
  // (not checkpointed, or the kept last piece): the last hidden layer's
  // output, which nothing keeps, and when not checkpointed the transposed
  // responses. Checkpointed (no grad): the widest moment of phi's hidden
  // layers, a Linear's input, output and activation alive together. Before
  // a chunk's pieces, its items' statistics over all persons: the scaled
  // responses and the rest score's expression (its two operands, the clamped
  // count, the quotient), 5 [B, c, P].
  const int64_t last_rows = b * last_person_chunk * last_chunk;
  const int64_t statistics = Tally(p).add(b * persons * chunk, 5).bytes();
  const int64_t last_hidden = Tally(p).add(depth > 0 ? last_rows * width : 0).bytes();
  if (checkpointed) {
    int64_t widest = features;
    if (depth > 0) widest = features + 2 * width;
    if (depth > 1) widest = std::max(widest, 3 * width);
    if (depth > 0 && s.dropout > 0) widest += width;
    const int64_t no_grad_forward = Tally(p).add(b * person_chunk * chunk * widest).bytes();
    m.item_stage_forward = keeps_last ? std::max(no_grad_forward, kept_last + last_hidden) : no_grad_forward;
  } else {
    m.item_stage_forward = Tally(p).add(cells).bytes() + last_hidden;
  }
  m.item_stage_forward = std::max(m.item_stage_forward, statistics);
  // Backward of a piece: the gradient of the last hidden layer's output (the
  // mask's rows times the mean's gradient) [N, width], then each layer's
  // gradient joins the one before it while its activations are freed: two
  // [N, width] alive. Checkpointed, the piece's forward is first recomputed
  // with grad.
  const int64_t rows = b * person_chunk * chunk;
  m.item_stage_backward = depth > 0 ? Tally(p).add(rows * width, 2).bytes() : 0;
  if (checkpointed) m.item_stage_backward += phi_saved(chunk, person_chunk);

  // Attention blocks over items, M = B*J rows of width E: saved are the
  // in_proj input (a contiguous copy of the [J, B, E] view), scaled q,
  // contiguous k and v, the softmax output [B*H, J, J], the out_proj input
  // (contiguous copy), LayerNorm 1 input + mean + rstd, the feed-forward
  // input (LayerNorm 1 output) and hidden layer, LayerNorm 2 input + mean +
  // rstd: 8 [M, E] tensors besides the feed-forward's hidden layer (10 in all
  // with silu, as the meter counts).
  const int64_t rows_m = b * items, e = s.embed_dim;
  const int64_t scores = b * s.attention_heads * items * items;
  Tally attention(p);
  for (int64_t i = 0; i < s.attention_layers; ++i) {
    attention.add(rows_m * e, 8 + saved_per_hidden_layer(s.activation, s.dropout)).add(scores).add(rows_m, 4);
  }
  // Backward of a block: gradients of the attention weights before and after
  // the softmax, and of a few [M, E] activations.
  m.attention_backward = s.attention_layers > 0 ? Tally(p).add(scores, 2).add(rows_m * e, 3).bytes() : 0;

  // The last block's output [M, E] (alive until the condition is built), the
  // global summary's mean and Mlp over [B, E], and the condition cat [M, C].
  Tally rest(p);
  rest.add(rows_m * e).add(b * e, 2 + saved_per_hidden_layer(s.activation, s.dropout)).add(b * s.summary_dim);
  rest.add(rows_m * spec.item_fit_dim());  // the item fit, alive until the condition is built
  m.condition = Tally(p).add(rows_m * spec.context_dim()).bytes();
  m.saved = m.item_stage + kept_last + attention.bytes() + rest.bytes() + m.condition;
  return m;
}

// The item fit (models/networks/item_fit.cpp) at its widest, without
// gradient, before the per-item stage starts: float32 copies of the responses
// and mask [B, P, J] and the one-hot categories [B, J*K, P] throughout, and
// at the wider of two moments either the one-hot's comparison (bool, while it
// is built) or in a round each person's log-likelihood at the nodes, with the
// prior added, and its softmax [B, Q, P]. What it holds per item and node is
// small.
int64_t item_fit_bytes(const DeviceProfile& p, const models::ApproximatorSpec& spec, const StepShape& shape) {
  if (!spec.summary.item_fit) return 0;
  const int64_t cells = shape.batch_size * shape.n_persons * shape.n_items;
  const int64_t comparison = Tally(p).add(cells * spec.n_categories, 1, 1).bytes();
  const int64_t node_weights = Tally(p).add(shape.batch_size * shape.n_persons * models::kItemFitNodes, 3).bytes();
  return Tally(p).add(cells, 2 + spec.n_categories).bytes() + std::max(comparison, node_weights);
}

// The simulator's draw (models/simulators/simulator.cpp) at its widest: theta
// [B, P] and the item params with their draws [B, J] (D + 2), the uniforms
// [B, P, J], the exceedance probabilities [B, P, J, K-1], their comparison
// with the uniforms (bool), its sum over categories (int64) and the float
// responses, all alive in one expression.
int64_t simulate_bytes(const DeviceProfile& p, const models::ApproximatorSpec& spec, const StepShape& shape) {
  const int64_t b = shape.batch_size, persons = shape.n_persons, items = shape.n_items;
  const int64_t cells = b * persons * items, thresholds = spec.n_categories - 1;
  return Tally(p)
      .add(b * persons)
      .add(b * items, spec.param_dim + 2)
      .add(b * items * spec.param_dim)
      .add(cells)
      .add(cells * thresholds)
      .add(cells * thresholds, 1, 1)
      .add(cells, 1, kInt64)
      .add(cells)
      .bytes();
}

// The calibration term (calibration_penalty.cpp) over R = n_rows rows, S =
// n_post_samples, k = log_prob_chunk_size:
//   - the log-prob of the true parameters: a second full flow pass with grad;
//   - kept until backward: the samples [R, S, D], the checkpointed chunks'
//     inputs (contiguous copies, S*R*D together), the context [R, C] saved by
//     every chunk, the sigmoid of the STE [R, S];
//   - on top, the largest of: sampling under no-grad (the base draws
//     [R, S, D], the chunks drawn so far and their cat, and for one chunk
//     its base draws, the context repeated k times [R*k, C] and one subnet's
//     widest moment over R*k rows); the rank step (the chunks' log-probs,
//     their cat, differences, hard and soft indicators [R, S]); the backward
//     of one chunk, recomputed with grad (its repeated context, the int64
//     repeat index, flow activations over R*k rows) with the flow's backward
//     buffers over R*k rows.
int64_t calibration_bytes(const DeviceProfile& profile, const models::ApproximatorSpec& spec, int64_t n_rows,
                          int64_t n_post_samples, int64_t param_dim, int64_t log_prob_chunk_size) {
  if (n_rows < 1 || n_post_samples < 1 || param_dim < 1 || log_prob_chunk_size < 1)
    throw std::invalid_argument("estimate_calibration_memory: all sizes must be >= 1");
  models::ApproximatorSpec flow_spec = spec;
  flow_spec.param_dim = param_dim;
  const int64_t r = n_rows, s = n_post_samples, k = std::min(log_prob_chunk_size, n_post_samples);
  const int64_t context = spec.context_dim();
  const int64_t n_chunks = ceil_div(s, k), last = s - (n_chunks - 1) * k;
  const int64_t true_pass = flow_saved_bytes(profile, flow_spec, r);
  const int64_t samples = Tally(profile).add(r * s * param_dim).bytes();
  const int64_t chunked = Tally(profile).add(r * k * param_dim, n_chunks - 1).add(r * last * param_dim).bytes();
  const int64_t kept = samples + chunked + Tally(profile).add(r * context).add(r * s).bytes();
  const int64_t one_chunk_draw = Tally(profile).add(r * k * param_dim).add(r * k * context).bytes() +
                                 flow_no_grad_bytes(profile, flow_spec, r * k);
  const int64_t sampling = samples + std::max(chunked + one_chunk_draw, chunked + samples);
  const int64_t ranks = Tally(profile).add(r * k, n_chunks).add(r * s, 5).add(r * s, 1, 1).bytes();
  const int64_t chunk_backward = Tally(profile).add(r * k * context).add(r * k, 1, kInt64).bytes() +
                                 flow_saved_bytes(profile, flow_spec, r * k) +
                                 flow_backward_bytes(profile, flow_spec, r * k);
  return true_pass + std::max(sampling, kept + std::max(ranks, chunk_backward));
}

double mb(int64_t bytes) { return static_cast<double>(bytes) / kMb; }

}  // namespace

nlohmann::json MemoryEstimate::to_json() const {
  return {{"parameters_mb", parameters_mb}, {"gradients_mb", gradients_mb}, {"optimizer_mb", optimizer_mb},
          {"batch_mb", batch_mb},           {"summary_mb", summary_mb},     {"flow_mb", flow_mb},
          {"calibration_mb", calibration_mb}, {"transient_mb", transient_mb}, {"workspace_mb", workspace_mb},
          {"context_mb", context_mb},
          {"peak_mb", peak_mb}};
}

MemoryEstimate estimate_peak_memory(const models::ApproximatorSpec& spec, const StepShape& shape,
                                    const DeviceProfile& profile) {
  if (shape.batch_size < 1 || shape.n_items < 1 || shape.n_persons < 1)
    throw std::invalid_argument("estimate_peak_memory: batch_size, n_items and n_persons must be >= 1");
  if (spec.memory.item_chunk_size && *spec.memory.item_chunk_size < 1)
    throw std::invalid_argument("estimate_peak_memory: memory.item_chunk_size must be >= 1");
  if (spec.memory.person_chunk_size && *spec.memory.person_chunk_size < 1)
    throw std::invalid_argument("estimate_peak_memory: memory.person_chunk_size must be >= 1");
  const int64_t rows = shape.batch_size * shape.n_items;

  Tally params(profile);
  add_parameters(params, spec);
  Tally buffers(profile);
  add_buffers(buffers, spec);
  const int64_t batch = Tally(profile)
                            .add(shape.batch_size * shape.n_persons * shape.n_items, 2)  // responses, mask
                            .add(shape.batch_size * shape.n_items * spec.param_dim)  // item_params
                            .add(shape.batch_size * shape.n_persons)                 // abilities
                            .bytes();
  const SummaryMemory summary = summary_memory(profile, spec, shape);
  const int64_t flow = flow_saved_bytes(profile, spec, rows);
  const auto& c = spec.calibration;
  const int64_t calibration =
      c.enabled ? calibration_bytes(profile, spec, rows, c.n_post_samples, spec.param_dim, c.log_prob_chunk_size) : 0;

  const int64_t early = batch + summary.saved + flow + calibration +
                        std::max(flow_backward_bytes(profile, spec, rows), summary.attention_backward);
  const int64_t late = batch + summary.item_stage + summary.item_stage_backward;
  const int64_t item_forward = batch + summary.item_stage + summary.item_stage_forward;
  const int64_t simulate = simulate_bytes(profile, spec, shape);
  const int64_t fit = batch + item_fit_bytes(profile, spec, shape);
  const int64_t activations = std::max({early, late, item_forward, simulate, fit});

  MemoryEstimate e;
  e.parameters_mb = mb(params.bytes() + buffers.bytes());
  e.gradients_mb = mb(params.bytes());
  e.optimizer_mb = 2 * mb(params.bytes());
  e.batch_mb = mb(batch);
  e.summary_mb = mb(summary.saved);
  e.flow_mb = mb(flow);
  e.calibration_mb = mb(calibration);
  e.transient_mb = mb(activations - (batch + summary.saved + flow + calibration));
  const bool cuda = profile.kind == DeviceKind::cuda;
  e.workspace_mb = cuda ? mb(profile.workspace_bytes) : 0.0;
  e.context_mb = cuda ? mb(profile.context_bytes) : 0.0;
  e.peak_mb = e.parameters_mb + e.gradients_mb + e.optimizer_mb + e.batch_mb + e.summary_mb + e.flow_mb +
              e.calibration_mb + e.transient_mb + e.workspace_mb + e.context_mb;
  return e;
}

double estimate_peak_memory_mb(const models::ApproximatorSpec& spec, const StepShape& shape,
                               const DeviceProfile& profile) {
  return estimate_peak_memory(spec, shape, profile).peak_mb;
}

double estimate_calibration_memory(int64_t n_rows, int64_t n_post_samples, int64_t param_dim,
                                   int64_t log_prob_chunk_size, const models::ApproximatorSpec& spec,
                                   const DeviceProfile& profile) {
  return mb(calibration_bytes(profile, spec, n_rows, n_post_samples, param_dim, log_prob_chunk_size));
}

bool exceeds_memory_budget(double peak_mb, double budget_mb) {
  if (!(budget_mb > 0))
    throw std::invalid_argument("exceeds_memory_budget: the budget must be a positive number of MB, got " +
                                std::to_string(budget_mb));
  return !(peak_mb <= budget_mb);
}

}  // namespace bfhpo::memory
