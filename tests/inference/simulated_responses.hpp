// One simulated response file for the trials tests: a data set of `persons`
// x `items` from spec's simulator, as `bfhpo infer` would read it, and the
// item parameters it was drawn with (float64) in *truth when asked.
#pragma once

#include "models/simulators/simulator.hpp"
#include "inference/response_matrix.hpp"

#include <string>

namespace bfhpo::test {

inline inference::ResponseMatrix simulated_responses(const models::SimulatorSpec& spec, int64_t items, int64_t persons,
                                                  uint64_t seed, torch::Tensor* truth = nullptr) {
  const models::Simulator simulator(spec, seed, torch::kCPU);
  const auto batch = simulator.sample_shape(1, items, persons, 0);
  inference::ResponseMatrix data;
  for (int64_t j = 0; j < items; ++j) data.item_names.push_back("item" + std::to_string(j));
  data.responses = batch.responses[0];
  data.mask = batch.mask[0];
  if (truth) *truth = batch.item_params[0].to(torch::kFloat64);
  return data;
}

}  // namespace bfhpo::test
