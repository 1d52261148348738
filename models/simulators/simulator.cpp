#include "models/simulators/simulator.hpp"

#include "models/simulators/seed_mix.hpp"

#include <random>
#include <stdexcept>

namespace bfhpo::models {

Simulator::Simulator(SimulatorSpec spec, uint64_t seed, torch::Device device)
    : spec_(std::move(spec)), model_(make_item_response_model(spec_)), seed_(seed), device_(device) {
  const IrtRanges& r = spec_.ranges;
  if (r.min_items < 1 || r.max_items < r.min_items || r.min_persons < 1 || r.max_persons < r.min_persons)
    throw std::invalid_argument("Simulator: invalid item/person ranges");
  if (!(spec_.missing.low >= 0 && spec_.missing.low <= spec_.missing.high && spec_.missing.high < 1))
    throw std::invalid_argument("Simulator: missing rates must satisfy 0 <= low <= high < 1");
}

SimulatedBatch Simulator::sample(int64_t batch_size, uint64_t batch_index) const {
  std::mt19937_64 shape_rng(mix_seed(seed_, batch_index) ^ 0x5DEECE66DULL);
  std::uniform_int_distribution<int64_t> items(spec_.ranges.min_items, spec_.ranges.max_items);
  std::uniform_int_distribution<int64_t> persons(spec_.ranges.min_persons, spec_.ranges.max_persons);
  const int64_t n_items = items(shape_rng);
  const int64_t n_persons = persons(shape_rng);
  return sample_shape(batch_size, n_items, n_persons, batch_index);
}

SimulatedBatch Simulator::sample_shape(int64_t batch_size, int64_t n_items, int64_t n_persons,
                                       uint64_t batch_index) const {
  torch::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(mix_seed(seed_, batch_index));
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  const auto theta = at::normal(0.0, 1.0, {batch_size, n_persons}, gen, opts);
  const auto item_params = model_->draw_item_params(batch_size, n_items, gen);
  // y = #{k : u < P(y >= k)}: category k with probability P(y >= k) - P(y >= k+1).
  const auto u = at::rand({batch_size, n_persons, n_items}, gen, opts);
  auto responses = (u.unsqueeze(-1) < model_->exceedance_probabilities(theta, item_params))
                       .sum(-1)
                       .to(torch::kFloat32);
  torch::Tensor mask;
  if (spec_.missing.any()) {
    const auto rate = spec_.missing.low + (spec_.missing.high - spec_.missing.low) *
                                              at::rand({batch_size, 1, 1}, gen, opts);
    mask = (at::rand({batch_size, n_persons, n_items}, gen, opts) >= rate).to(torch::kFloat32);
    responses.mul_(mask);
  } else {
    mask = torch::ones_like(responses);
  }
  return {responses.to(device_), mask.to(device_), item_params.to(device_), theta.to(device_)};
}

}  // namespace bfhpo::models
