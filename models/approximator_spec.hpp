// ApproximatorSpec: one value that fully describes an amortized posterior
// approximator -- summary network, inference flow, calibration term and the
// memory configuration of the summary network's per-item stage. The networks
// are constructed from it, the memory estimator reads it, and the trials
// layer fills it from a study's fixed values and a trial's params. JSON keys
// are the field names below (dotted paths from the top, e.g.
// "summary.embed_dim", "flow.depth", "calibration.weight").
#pragma once

#include "models/networks/activation.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::models {

// How the summary network's per-item stage spends memory. With an item chunk
// the per-cell activations exist for `item_chunk_size` items at a time, and
// with a person chunk for `person_chunk_size` of the persons of those items
// at a time (the persons' pooled sum is summed over the person chunks); with
// gradient checkpointing a chunk's activations are not kept for backward but
// recomputed there, so the peak scales with the chunk, not with n_items x
// n_persons.
struct MemoryConfig {
  std::optional<int64_t> item_chunk_size;  // none: all items at once
  bool gradient_checkpointing = false;
  std::optional<int64_t> person_chunk_size;  // none: all persons at once
};

// Summary network for a persons x items response matrix (see summary_network.hpp).
struct SummarySpec {
  int64_t cell_dim = 32;          // width of the per-cell embedding (DeepSet phi output)
  int64_t cell_mlp_width = 64;    // hidden width of phi
  int64_t cell_mlp_depth = 2;     // hidden layers of phi
  int64_t embed_dim = 64;         // per-item embedding width = attention model width
  int64_t attention_heads = 4;    // must divide embed_dim
  int64_t attention_layers = 2;   // SetTransformer self-attention blocks across items
  int64_t summary_dim = 32;       // global summary width
  double dropout = 0.0;
  Activation activation = Activation::silu;
  bool item_fit = false;          // each item's fitted curve as input (models/networks/item_fit.hpp)
};

// Conditional affine coupling flow (see coupling_flow.hpp).
struct FlowSpec {
  int64_t depth = 6;              // coupling layers
  int64_t subnet_width = 128;     // hidden width of each coupling subnet
  int64_t subnet_depth = 2;       // hidden layers of each coupling subnet
  double clamp = 1.9;             // soft clamp of the log-scales
  double dropout = 0.0;
  Activation activation = Activation::silu;
};

// Calibration penalty of the CalibratedApproximator (Falkiewicz et al. 2023).
struct CalibrationSpec {
  bool enabled = false;           // false: a plain ContinuousApproximator
  double weight = 1.0;            // lambda in NLL + lambda * penalty
  int64_t n_post_samples = 100;   // posterior samples per observation for the ranks
  int64_t log_prob_chunk_size = 25;  // samples whose log-probs are evaluated at once
  bool conservative = true;       // one-sided (penalise over-confidence only) or two-sided
  double ste_temperature = 0.01;  // sharpness of the straight-through rank's sigmoid
};

// Per-cell features of the summary network for K response categories
// (summary_network.hpp lists them).
constexpr int64_t n_cell_features(int64_t n_categories) { return n_categories - 1 + 8; }

// Quadrature nodes of the item fit (models/networks/item_fit.hpp), which the
// memory estimate counts.
inline constexpr int64_t kItemFitNodes = 21;

struct ApproximatorSpec {
  // What the simulator's model fixes (models/simulators/simulator.hpp), not
  // hyperparameters: the trials layer sets them from the study's model.
  int64_t param_dim = 2;          // parameters per item, e.g. 2 for the 2PL's (log a_j, b_j)
  int64_t n_categories = 2;       // response categories (2: binary items)
  SummarySpec summary;
  FlowSpec flow;
  CalibrationSpec calibration;
  MemoryConfig memory;

  // Features of an item's fitted curve (log a, then K-1 difficulties) when summary.item_fit, else 0.
  int64_t item_fit_dim() const { return summary.item_fit ? n_categories : 0; }
  // Width of the flow's conditioning vector per item: item context + global summary (+ the item's fit).
  int64_t context_dim() const { return summary.embed_dim + summary.summary_dim + item_fit_dim(); }
};

// JSON: nested objects ({"summary": {"embed_dim": 64}}) or dotted keys
// ({"summary.embed_dim": 64}), every field optional (missing = default). An
// unknown key, a wrong type or an out-of-range value is a UserError naming
// `where` (a file name), the dotted field and the fix (the closest valid name
// for an unknown one).
ApproximatorSpec approximator_spec_from_json(const nlohmann::json& json, const std::string& where);
nlohmann::json to_json(const ApproximatorSpec& spec);  // nested, every field
// {"item_chunk_size": n or null, "gradient_checkpointing": b, "person_chunk_size": n or null}
nlohmann::json to_json(const MemoryConfig& memory);
// Sets one field by its dotted name; the same errors as above.
void set_spec_field(ApproximatorSpec& spec, const std::string& dotted_name, const nlohmann::json& value,
                    const std::string& where);
bool is_spec_field(const std::string& dotted_name);
std::vector<std::string> approximator_field_names();  // every dotted name, sorted
// Checks ranges (positive widths, heads divide embed_dim, ...); UserError naming `where`.
void validate(const ApproximatorSpec& spec, const std::string& where);

}  // namespace bfhpo::models
