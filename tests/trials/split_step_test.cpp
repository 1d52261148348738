#include <catch2/catch.hpp>

#include "memory/cpu_memory_tracking.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/split_step.hpp"
#include "trials/trainer.hpp"

#include <vector>

using namespace bfhpo;
using namespace bfhpo::trials;

namespace {

// An approximator of tiny_spec() whose actnorms have initialised themselves from a first batch, with a copy.
struct TwinApproximators {
  std::shared_ptr<models::ContinuousApproximatorImpl> whole, split;
};

TwinApproximators twins(const models::SimulatedBatch& first_batch, const models::ApproximatorSpec& spec) {
  torch::manual_seed(3);
  TwinApproximators out{models::make_approximator(spec, 3), models::make_approximator(spec, 3)};
  out.whole->train();
  out.whole->loss(first_batch.responses, first_batch.item_params, first_batch.mask);
  torch::NoGradGuard no_grad;
  auto from = out.whole->parameters(), to = out.split->parameters();
  for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  auto from_buffers = out.whole->buffers(), to_buffers = out.split->buffers();
  for (size_t i = 0; i < from_buffers.size(); ++i) to_buffers[i].copy_(from_buffers[i]);
  out.split->train();
  return out;
}

std::vector<torch::Tensor> gradients_of(models::ContinuousApproximatorImpl& approximator) {
  std::vector<torch::Tensor> out;
  for (const auto& p : approximator.parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  return out;
}

}  // namespace

// The parts' sums are the whole batch's in another order and with other product blockings: float32 rounding,
// relative 1e-6 on each of a few thousand terms, so relative 1e-4 on the loss and on every gradient element above
// 1e-5 of the largest.
TEST_CASE("split_loss_backward gives the whole batch's loss, gradient and statistics, the same on every run",
          "[split_step]") {
  const models::Simulator simulator(test::simulator_at({8, 8, 40, 40}, "2pl", 2, 0.1), 4, torch::kCPU);
  const auto first = simulator.sample(6, 0), batch = simulator.sample(7, 1);
  const int64_t parts = GENERATE(2, 3, 7);
  INFO(parts << " parts");
  auto [whole, split] = twins(first, test::tiny_spec());
  REQUIRE(whole->loss_splits_by_data_set());

  const auto terms = whole->loss(batch.responses, batch.item_params, batch.mask);
  terms.total.backward();
  const double split_loss = split_loss_backward(*split, batch, parts);
  CHECK(split_loss == Approx(terms.total.item<double>()).epsilon(1e-4));
  const auto expected = gradients_of(*whole), got = gradients_of(*split);
  REQUIRE(expected.size() == got.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(expected[i].defined() == got[i].defined());
    if (!expected[i].defined()) continue;
    const double scale = expected[i].abs().max().item<double>();
    CHECK(torch::allclose(got[i], expected[i], 1e-4, 1e-5 * scale + 1e-12));
  }
  CHECK(test::same_state(whole->buffers(), split->buffers()));  // the statistics updated once, from the whole batch
  CHECK(split->standardization()->is_training());                // and no longer held

  // Again from the same state: the same values, bit for bit.
  auto again_twins = twins(first, test::tiny_spec());
  split_loss_backward(*again_twins.split, batch, parts);
  const auto again = gradients_of(*again_twins.split);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].defined()) CHECK(torch::equal(got[i], again[i]));
}

TEST_CASE("step_parts splits only a CPU step whose loss splits, into at most one part a data set", "[split_step]") {
  const models::Simulator simulator(test::tiny_simulator(), 4, torch::kCPU);
  const auto first = simulator.sample(4, 0);
  auto spec = test::tiny_spec();
  torch::manual_seed(3);
  auto fresh = models::make_approximator(spec, 3);
  CHECK_FALSE(fresh->loss_splits_by_data_set());  // actnorm initialises itself from the first batch it sees
  CHECK(step_parts(*fresh, 32, 2, torch::kCPU) == 1);
  auto [ready, unused] = twins(first, spec);
  CHECK(step_parts(*ready, 32, 2, torch::kCPU) == 2);
  CHECK(step_parts(*ready, 32, 4, torch::kCPU) == 4);
  CHECK(step_parts(*ready, 3, 4, torch::kCPU) == 3);
  CHECK(step_parts(*ready, 1, 2, torch::kCPU) == 1);
  CHECK(step_parts(*ready, 32, 1, torch::kCPU) == 1);
  CHECK(step_parts(*ready, 32, 2, torch::Device(torch::kCUDA)) == 1);
  spec.summary.dropout = 0.1;
  CHECK_FALSE(twins(first, spec).whole->loss_splits_by_data_set());  // dropout draws random numbers
  spec.summary.dropout = 0.0;
  spec.calibration.enabled = true;
  CHECK_FALSE(twins(first, spec).whole->loss_splits_by_data_set());  // so do the calibration penalty's draws
}

// A part that runs out of memory under a real CPU budget: the error comes out of the step once every part has
// stopped, no gradient is added, the standardization is no longer held, and the step counter and weights stay.
TEST_CASE("Trainer: a split step that runs out of memory in a part changes nothing", "[split_step]") {
  auto options = test::tiny_training(1, 4, 8);
  options.threads = 2;
  auto trainer = test::tiny_trainer(options);
  trainer->train_step();  // actnorm initialised: the next steps split
  REQUIRE(step_parts(trainer->approximator(), 8, 2, torch::kCPU) == 2);
  const auto batch = models::Simulator(test::tiny_simulator(), 9, torch::kCPU).sample(8, 0);
  const auto state = test::state_of(trainer->approximator());
  memory::install_cpu_memory_tracking();
  {
    // Far below a part's summary network (4 x 60 x 12 cells x 64 wide), far above the buffers' copies.
    const memory::CpuMemoryBudget budget(memory::cpu_current_bytes() + 64 * 1024);
    REQUIRE_THROWS(trainer->train_step(batch));
  }
  CHECK(trainer->steps_completed() == 1);
  CHECK(test::same_state(test::state_of(trainer->approximator()), state));
  CHECK(trainer->approximator().standardization()->is_training());
  trainer->train_step(batch);
  CHECK(trainer->steps_completed() == 2);
}

// Split and whole steps train the same network: Adam magnifies rounding as it goes (bench/README.md, training
// throughput: ~1e-7 relative at the first steps, ~6e-4 after 60), so the first 5 steps' losses agree to 1e-4.
TEST_CASE("Trainer: two training threads split the steps and train the network one thread trains", "[split_step]") {
  auto options = test::tiny_training(1, 6, 8);
  auto one = test::tiny_trainer(options);
  options.threads = 2;
  auto two = test::tiny_trainer(options);
  for (int step = 0; step < 6; ++step) {
    INFO("step " << step);
    CHECK(two->train_step() == Approx(one->train_step()).epsilon(1e-4));
  }
}
