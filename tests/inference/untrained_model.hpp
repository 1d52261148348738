// An untrained estimator and a simulated data set in infer's form, for the
// inference tests that need a network but not a trained one.
#pragma once

#include "inference/posterior_inference.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"

#include <string>

namespace bfhpo::test {

// An untrained estimator of `simulator`'s model, every weight perturbed at
// random: the flow's zero-initialised output layers would otherwise make
// its draws ignore the responses.
inline inference::TrainedModel untrained_model(const models::SimulatorSpec& simulator) {
  inference::TrainedModel model;
  model.config.simulator = simulator;
  model.config.approximator = test::tiny_spec_for(simulator);
  torch::manual_seed(3);
  model.approximator = models::make_approximator(model.config.approximator, 3);
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.approximator->parameters()) parameter.add_(0.1 * torch::randn_like(parameter));
  model.approximator->eval();
  return model;
}

inline inference::ResponseMatrix data_of(const models::SimulatedBatch& batch) {
  inference::ResponseMatrix data;
  for (int64_t j = 0; j < batch.responses.size(2); ++j) data.item_names.push_back("item" + std::to_string(j));
  data.responses = batch.responses[0];
  data.mask = batch.mask[0];
  return data;
}

}  // namespace bfhpo::test
