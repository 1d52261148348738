#include <catch2/catch.hpp>

#include "memory/cpu_memory_tracking.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/probe.hpp"

using namespace bfhpo;
using namespace bfhpo::trials;

TEST_CASE("probe_memory_config measures each point on a clone and applies the first that fits", "[probe]") {
  auto trainer = test::tiny_trainer(test::tiny_training(1, 4, 16));
  trainer->train_step();  // Adam state exists and must stay untouched
  auto& approximator = trainer->approximator();
  const auto weights = test::state_of(approximator);
  std::vector<torch::Tensor> adam_state;
  for (const auto& p : approximator.parameters()) {
    auto& state = test::adam_state_of(trainer->optimizer().state(), p);
    adam_state.push_back(state.exp_avg().clone());
    adam_state.push_back(state.exp_avg_sq().clone());
  }
  memory::install_cpu_memory_tracking();

  ProbeOptions options;
  options.batch_size = 16;
  options.ladder = {{4, 1}, {}};
  options.early_stop = false;
  const MemoryProbeReport unlimited = probe_memory_config(approximator, test::tiny_simulator(), options, torch::kCPU);
  REQUIRE(unlimited.points.size() == 3);
  for (const auto& p : unlimited.points) CHECK(p.fits);
  const double unchunked = unlimited.points[0].peak_mb, chunk1 = unlimited.points[2].peak_mb;
  REQUIRE(chunk1 < unchunked);

  // A budget between the two: the unchunked step must fail, a chunk must fit.
  options.early_stop = true;
  options.cpu_budget_bytes =
      memory::cpu_current_bytes() + static_cast<int64_t>((unchunked + chunk1) / 2 * 1024 * 1024);
  const MemoryProbeReport report = probe_memory_config(approximator, test::tiny_simulator(), options, torch::kCPU);
  REQUIRE(report.chosen.has_value());
  CHECK_FALSE(report.points.front().fits);
  CHECK_THAT(report.points.front().error, Catch::Contains("out of memory"));
  CHECK(report.points.back().fits);  // early stop: the first that fits is the last tried
  CHECK(report.chosen->gradient_checkpointing);
  CHECK(approximator.spec().memory.item_chunk_size == report.chosen->item_chunk_size);
  CHECK(approximator.summary_network()->memory_config().gradient_checkpointing);

  CHECK(test::same_state(weights, test::state_of(approximator)));
  size_t i = 0;
  for (const auto& p : approximator.parameters()) {
    auto& state = test::adam_state_of(trainer->optimizer().state(), p);
    CHECK(torch::equal(state.exp_avg(), adam_state[i++]));
    CHECK(torch::equal(state.exp_avg_sq(), adam_state[i++]));
  }
}
