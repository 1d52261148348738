// Batched 2PL IRT simulator. One batch shares one shape: n_items J and
// n_persons P are drawn per batch from the configured ranges. theta_p ~ N(0,1),
// b_j ~ N(0,1), log a_j ~ N(0, 0.5), y_pj ~ Bernoulli(sigmoid(a_j (theta_p - b_j))).
// The inference target is each item's (log a_j, b_j). A batch is a pure
// function of (seed, batch_index): the same pair gives the same batch on any run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace bfhpo::models {

struct IrtRanges {
  int64_t min_items = 15;
  int64_t max_items = 50;
  int64_t min_persons = 150;
  int64_t max_persons = 500;
};

struct IrtBatch {
  torch::Tensor responses;    // [B, P, J] float, 0/1
  torch::Tensor item_params;  // [B, J, 2] = (log a_j, b_j)
  torch::Tensor abilities;    // [B, P]
};

class IrtSimulator {
 public:
  IrtSimulator(IrtRanges ranges, uint64_t seed, torch::Device device);

  // Draws the shape for this batch index from the ranges, then simulates.
  IrtBatch sample(int64_t batch_size, uint64_t batch_index) const;
  // Simulates with an explicit shape (validation sets, tests).
  IrtBatch sample_shape(int64_t batch_size, int64_t n_items, int64_t n_persons,
                        uint64_t batch_index) const;

  static constexpr int64_t param_dim = 2;
  // The prior of the inference target, for diagnostics: names {"log_a", "b"}
  // and variances {0.25, 1} (log a_j ~ N(0, 0.5^2), b_j ~ N(0, 1)).
  static std::vector<std::string> parameter_names() { return {"log_a", "b"}; }
  static torch::Tensor prior_variance() { return torch::tensor({0.25, 1.0}, torch::kFloat64); }

 private:
  IrtRanges ranges_;
  uint64_t seed_;
  torch::Device device_;
};

}  // namespace bfhpo::models
