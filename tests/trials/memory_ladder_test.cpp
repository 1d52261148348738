#include <catch2/catch.hpp>

#include "memory/cpu_memory_tracking.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/memory_gate.hpp"
#include "trials/memory_ladder.hpp"
#include "trials/oom_retry.hpp"

#include <optional>
#include <vector>

using namespace bfhpo;
using namespace bfhpo::trials;

namespace {

bool same(const models::MemoryConfig& a, const models::MemoryConfig& b) {
  return a.item_chunk_size == b.item_chunk_size && a.person_chunk_size == b.person_chunk_size &&
         a.gradient_checkpointing == b.gradient_checkpointing;
}

// A network whose per-cell stage outweighs the batch at many persons: one
// item's 900 persons are what does not fit.
models::ApproximatorSpec wide_phi_spec() {
  auto spec = test::tiny_spec();
  spec.summary.cell_mlp_width = 192;
  spec.summary.cell_mlp_depth = 3;
  return spec;
}

const models::SimulatorSpec kManyPersons = test::simulator_at({5, 5, 900, 900});

// Peak bytes of a fresh trainer's second step at kManyPersons above the bytes in use before it was built.
int64_t step_peak(int64_t batch_size, models::MemoryConfig memory) {
  memory::install_cpu_memory_tracking();
  const int64_t before = memory::cpu_current_bytes();
  auto spec = wide_phi_spec();
  spec.memory = memory;
  torch::manual_seed(5);
  Trainer trainer(models::make_approximator(spec, 5), kManyPersons, test::tiny_training(1, 2, batch_size),
                  torch::kCPU);
  trainer.train_step();
  memory::reset_cpu_peak();
  trainer.train_step();
  return memory::cpu_peak_bytes() - before;
}

}  // namespace

TEST_CASE("The memory ladder: item chunks with checkpointing, then person chunks at the smallest item chunk",
          "[memory_ladder]") {
  const MemoryLadder ladder{{8, 2}, {500, 50}};
  const std::vector<models::MemoryConfig> expected{{8, true, std::nullopt}, {2, true, std::nullopt}, {2, true, 500}, {2, true, 50}};
  const auto rungs = ladder.rungs();
  REQUIRE(rungs.size() == expected.size());
  for (size_t i = 0; i < rungs.size(); ++i) CHECK(same(rungs[i], expected[i]));

  // From an unchunked configuration, below() walks every rung once, in order, then stops.
  const memory::StepShape large{4, 100, 10000};
  models::MemoryConfig current;
  std::vector<models::MemoryConfig> walked;
  while (const auto next = ladder.below(current, large)) {
    walked.push_back(*next);
    current = *next;
    REQUIRE(walked.size() <= rungs.size());
  }
  REQUIRE(walked.size() == rungs.size());
  for (size_t i = 0; i < rungs.size(); ++i) CHECK(same(walked[i], rungs[i]));

  // A rung without checkpointing is dearer than the same rung with it.
  CHECK(same(*ladder.below({8, false, std::nullopt}, large), {8, true, std::nullopt}));
  // A configuration between rungs goes to the next cheaper one, and keeps its own smaller person chunk.
  CHECK(same(*ladder.below({4, false, 100}, large), {2, true, 100}));
  CHECK(same(*ladder.below({2, true, 100}, large), {2, true, 50}));
  CHECK_FALSE(ladder.below({1, true, std::nullopt}, large));

  // At a shape, only the rungs that cut something.
  const auto at_shape = ladder.rungs_at({4, 6, 400});
  REQUIRE(at_shape.size() == 2);  // 8 items a chunk cuts nothing of 6; 500 persons nothing of 400
  CHECK(same(at_shape[0], {2, true, std::nullopt}));
  CHECK(same(at_shape[1], {2, true, 50}));
  // Below a configuration, only those rungs too: 8 items a chunk is skipped at 6 items.
  CHECK(same(*ladder.below({}, {4, 6, 400}), {2, true, std::nullopt}));
  CHECK(same(*ladder.below({2, true, std::nullopt}, {4, 6, 400}), {2, true, 50}));
  CHECK_FALSE(ladder.below({2, true, std::nullopt}, {4, 6, 40}));

  CHECK_FALSE(ladder.problem());
  CHECK(MemoryLadder{{8, 2}, {}}.problem() == std::nullopt);
  CHECK(MemoryLadder{{8, 2}, {50, 500}}.problem()->field == "person_chunk_ladder");
  CHECK(MemoryLadder{{}, {50}}.problem()->field == "item_chunk_ladder");
}

TEST_CASE("The gate chooses a person chunk where item chunks alone do not fit, the estimate's cheapest first",
          "[memory_ladder]") {
  TrialConfig config;
  config.approximator = wide_phi_spec();
  config.simulator = kManyPersons;
  config.training.batch_size = 8;
  const MemoryLadder ladder{{4, 1}, {300, 100}};
  auto spec = config.approximator;
  const auto shape = worst_case_shape(config);
  const auto estimate = [&](models::MemoryConfig memory) {
    spec.memory = memory;
    return memory::estimate_peak_memory_mb(spec, shape);
  };
  const double item_chunk_1 = estimate({1, true, std::nullopt}), persons_300 = estimate({1, true, 300});
  REQUIRE(persons_300 < item_chunk_1);
  const auto profile = memory::DeviceProfile{};
  const GateDecision between = memory_gate(config, (item_chunk_1 + persons_300) / 2, profile, ladder);
  REQUIRE(between.fits);
  CHECK(same(between.memory, {1, true, 300}));
  CHECK(between.estimate.peak_mb == Approx(persons_300).epsilon(1e-12));
  const GateDecision roomy = memory_gate(config, item_chunk_1, profile, ladder);
  CHECK(same(roomy.memory, {1, true, std::nullopt}));
  const GateDecision none = memory_gate(config, estimate({1, true, 100}) / 2, profile, ladder);
  CHECK_FALSE(none.fits);
  CHECK(same(none.memory, {1, true, 100}));
}

TEST_CASE("fit_with_oom_retry reaches a person chunk under a real CPU budget, keeping the batch size",
          "[memory_ladder]") {
  const int64_t item_chunked = step_peak(4, {1, true, std::nullopt});
  const int64_t person_chunked = step_peak(4, {1, true, 100});
  INFO("item chunk 1: " << item_chunked << " bytes, and 100 persons a chunk: " << person_chunked << " bytes");
  REQUIRE(person_chunked < item_chunked * 0.7);
  auto spec = wide_phi_spec();
  spec.memory = {1, true, std::nullopt};
  torch::manual_seed(5);
  auto training = test::tiny_training(1, 3, 4);
  training.validation_sims = 4;  // the batch's size: validation fits where training does
  Trainer trainer(models::make_approximator(spec, 5), kManyPersons, training, torch::kCPU);
  OomRetryOptions options;
  options.min_batch_size = 4;
  options.ladder = {{1}, {100}};
  memory::install_cpu_memory_tracking();
  FitResult result;
  {
    const memory::CpuMemoryBudget budget(memory::cpu_current_bytes() + (item_chunked + person_chunked) / 2);
    result = fit_with_oom_retry(trainer, options);
  }
  REQUIRE(result.summary.reason == StopReason::completed);
  // One OOM, at item chunk 1 with all persons; the retry went on at 100 persons a chunk.
  REQUIRE(result.history.size() == 1);
  CHECK(result.history[0].item_chunk_size == std::optional<int64_t>(1));
  CHECK_FALSE(result.history[0].person_chunk_size);
  CHECK(result.person_chunk_size == std::optional<int64_t>(100));
  CHECK(result.item_chunk_size == std::optional<int64_t>(1));
  CHECK(result.batch_size == 4);
  CHECK(trainer.steps_completed() == trainer.total_steps());
}
