#include "models/simulators/irt_simulator.hpp"

#include <random>
#include <stdexcept>

#include "models/simulators/seed_mix.hpp"

namespace bfhpo::models {

IrtSimulator::IrtSimulator(IrtRanges ranges, uint64_t seed, torch::Device device)
    : ranges_(ranges), seed_(seed), device_(device) {
  if (ranges_.min_items < 1 || ranges_.max_items < ranges_.min_items ||
      ranges_.min_persons < 1 || ranges_.max_persons < ranges_.min_persons)
    throw std::invalid_argument("IrtSimulator: invalid item/person ranges");
}

IrtBatch IrtSimulator::sample(int64_t batch_size, uint64_t batch_index) const {
  std::mt19937_64 shape_rng(mix_seed(seed_, batch_index) ^ 0x5DEECE66DULL);
  std::uniform_int_distribution<int64_t> items(ranges_.min_items, ranges_.max_items);
  std::uniform_int_distribution<int64_t> persons(ranges_.min_persons, ranges_.max_persons);
  const int64_t n_items = items(shape_rng);
  const int64_t n_persons = persons(shape_rng);
  return sample_shape(batch_size, n_items, n_persons, batch_index);
}

IrtBatch IrtSimulator::sample_shape(int64_t batch_size, int64_t n_items,
                                    int64_t n_persons, uint64_t batch_index) const {
  torch::NoGradGuard no_grad;
  auto gen = torch::make_generator<torch::CPUGeneratorImpl>(mix_seed(seed_, batch_index));
  auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  // Draw on CPU with an explicit generator so a batch is identical on every
  // device and run, then move it to the training device.
  auto theta = at::normal(0.0, 1.0, {batch_size, n_persons}, gen, opts);
  auto b = at::normal(0.0, 1.0, {batch_size, n_items}, gen, opts);
  auto log_a = at::normal(0.0, 0.5, {batch_size, n_items}, gen, opts);
  auto logits = log_a.exp().unsqueeze(1) * (theta.unsqueeze(2) - b.unsqueeze(1));
  auto u = at::rand({batch_size, n_persons, n_items}, gen, opts);
  auto y = (u < torch::sigmoid(logits)).to(torch::kFloat32);
  return {y.to(device_), torch::stack({log_a, b}, -1).to(device_), theta.to(device_)};
}

}  // namespace bfhpo::models
