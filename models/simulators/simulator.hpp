// Simulator: batches of IRT datasets for any ItemResponseModel. One batch
// shares one shape: n_items J and n_persons P are drawn per batch from the
// spec's ranges; abilities theta_p ~ N(0, 1), the item parameters from the
// model's prior, the responses from the model's category probabilities; with
// a missing rate, each cell is missing completely at random (a rate per
// dataset when the spec gives a range). A batch is a pure function of (spec,
// seed, batch_index): the same triple gives the same batch on any device and
// run (drawn on the CPU with one generator, then moved).
//
// This is the seam between the models and everything that trains, evaluates,
// probes or estimates: they read the batch, the target's names and dimension,
// and the response categories from here and never name a model.
#pragma once

#include "models/simulators/item_response_model.hpp"
#include "models/simulators/simulator_spec.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bfhpo::models {

struct SimulatedBatch {
  torch::Tensor responses;    // [B, P, J] float: the category 0..K-1 (0/1 for binary models); 0 where missing
  torch::Tensor mask;         // [B, P, J] float: 1 observed, 0 missing
  torch::Tensor item_params;  // [B, J, D], D = param_dim()
  torch::Tensor abilities;    // [B, P]
};

class Simulator {
 public:
  Simulator(SimulatorSpec spec, uint64_t seed, torch::Device device);

  // Draws the shape for this batch index from the ranges, then simulates.
  SimulatedBatch sample(int64_t batch_size, uint64_t batch_index) const;
  // Simulates with an explicit shape (validation sets, the memory probe, tests).
  SimulatedBatch sample_shape(int64_t batch_size, int64_t n_items, int64_t n_persons, uint64_t batch_index) const;

  const SimulatorSpec& spec() const { return spec_; }
  const ItemResponseModel& model() const { return *model_; }
  std::vector<std::string> parameter_names() const { return model_->parameter_names(); }
  int64_t param_dim() const { return model_->param_dim(); }
  int64_t n_categories() const { return model_->n_categories(); }
  torch::Tensor prior_variance() const { return model_->prior_variance(); }

 private:
  SimulatorSpec spec_;
  std::shared_ptr<const ItemResponseModel> model_;
  uint64_t seed_;
  torch::Device device_;
};

}  // namespace bfhpo::models
