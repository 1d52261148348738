// A tiny IRT trainer shared by the trials tests, around tests/models/tiny_spec.hpp.
#pragma once

#include "models/approximator.hpp"
#include "tests/models/tiny_spec.hpp"
#include "trials/trainer.hpp"

#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

namespace bfhpo::test {

inline models::SimulatorSpec tiny_simulator() { return test::simulator_at({12, 12, 60, 60}); }

inline trials::TrainingOptions tiny_training(int epochs = 3, int num_batches = 8, int64_t batch_size = 16) {
  trials::TrainingOptions options;
  options.epochs = epochs;
  options.num_batches = num_batches;
  options.batch_size = batch_size;
  options.learning_rate = 3e-3;
  options.validation_sims = 32;
  options.seed = 5;
  return options;
}

inline std::unique_ptr<trials::Trainer> tiny_trainer(const trials::TrainingOptions& options,
                                                     const models::ApproximatorSpec& spec = tiny_spec()) {
  torch::manual_seed(options.seed);
  return std::make_unique<trials::Trainer>(models::make_approximator(spec, options.seed), tiny_simulator(), options,
                                           torch::kCPU);
}

// Every parameter and buffer, cloned, for bitwise comparisons.
inline std::vector<torch::Tensor> state_of(torch::nn::Module& module) {
  std::vector<torch::Tensor> state;
  for (const auto& p : module.parameters()) state.push_back(p.detach().clone());
  for (const auto& b : module.buffers()) state.push_back(b.detach().clone());
  return state;
}

inline bool same_state(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

// Adam's state of one parameter. The optimizer's state map is keyed by the
// parameter's TensorImpl: its address printed to a string in LibTorch 1.13,
// the address itself (void*) in 2.x. A template, so that only the branch of
// the libtorch at hand is compiled.
template <typename StateMap>
torch::optim::AdamParamState& adam_state_of(StateMap& state, const torch::Tensor& parameter) {
  using Key = typename StateMap::key_type;
  void* const impl = parameter.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream address;
    address << impl;
    return static_cast<torch::optim::AdamParamState&>(*state.at(address.str()));
  } else {
    return static_cast<torch::optim::AdamParamState&>(*state.at(static_cast<Key>(impl)));
  }
}

}  // namespace bfhpo::test
