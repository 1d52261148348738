#include <catch2/catch.hpp>

#include "memory/cpu_memory_tracking.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/oom_retry.hpp"

#include <optional>

using namespace bfhpo;
using namespace bfhpo::trials;

namespace {

// Peak bytes of a fresh trainer's second training step (Adam states exist
// then) above the bytes in use before the trainer was built.
int64_t step_peak(int64_t batch_size, models::MemoryConfig memory) {
  memory::install_cpu_memory_tracking();
  const int64_t before = memory::cpu_current_bytes();
  auto spec = test::tiny_spec();
  spec.memory = memory;
  auto trainer = test::tiny_trainer(test::tiny_training(1, 2, batch_size), spec);
  trainer->train_step();
  memory::reset_cpu_peak();
  trainer->train_step();
  return memory::cpu_peak_bytes() - before;
}

}  // namespace

TEST_CASE("fit_with_oom_retry steps down the ladder under a real CPU budget and keeps learning", "[oom_retry]") {
  const int64_t full = step_peak(16, {});
  const int64_t cheap = step_peak(4, {1, true, std::nullopt});
  REQUIRE(cheap < full);
  auto trainer = test::tiny_trainer(test::tiny_training(4, 8, 16));
  const int64_t baseline = memory::cpu_current_bytes();
  // Epoch 1 trains freely; from then on the machine "has" a smaller device
  // than the start configuration needs.
  std::optional<memory::CpuMemoryBudget> budget;
  std::vector<double> validation;
  OomRetryOptions options;
  options.min_batch_size = 4;
  options.ladder = {{4, 1}, {}};
  const FitResult result = fit_with_oom_retry(*trainer, options, [&](const EpochReport& epoch) {
    validation.push_back(epoch.validation_loss);
    if (epoch.epoch == 1) budget.emplace(baseline + (cheap + full) / 2);
    return true;
  });
  budget.reset();

  REQUIRE(result.summary.reason == StopReason::completed);
  REQUIRE_FALSE(result.history.empty());
  CHECK(result.attempts == static_cast<int>(result.history.size()) + 1);
  // The first OOM hit the first step after the budget; every retry re-ran that
  // same step or a later one: no completed step was lost.
  CHECK(result.history.front().step == 8);
  CHECK(result.history.front().batch_size == 16);
  CHECK_FALSE(result.history.front().item_chunk_size);
  CHECK(result.history.front().bytes_requested.value_or(0) > 0);
  for (size_t i = 1; i < result.history.size(); ++i) CHECK(result.history[i].step >= result.history[i - 1].step);
  CHECK(trainer->steps_completed() == trainer->total_steps());
  // It ended cheaper than it started: a chunk with checkpointing, maybe a smaller batch.
  CHECK(result.item_chunk_size.has_value());
  CHECK(result.gradient_checkpointing);
  CHECK(result.batch_size <= 16);
  // The run kept learning after the retry.
  REQUIRE(validation.size() == 4);
  CHECK(validation.back() < validation.front());
}

TEST_CASE("below min_batch_size: OomBackoffExhausted names the last configuration, nothing else changed",
          "[oom_retry]") {
  auto trainer = test::tiny_trainer(test::tiny_training(2, 4, 8));
  trainer->train_step();  // a completed step and Adam state that must survive
  const auto weights = test::state_of(trainer->approximator());
  const int steps = trainer->steps_completed();
  OomRetryOptions options;
  options.min_batch_size = 4;
  options.ladder = {{2}, {}};
  memory::install_cpu_memory_tracking();
  std::string message;
  std::vector<OomEvent> history;
  std::vector<std::pair<OomEvent, std::optional<OomEvent>>> announced;
  {
    memory::CpuMemoryBudget budget(memory::cpu_current_bytes() + 1024);  // nothing fits
    try {
      fit_with_oom_retry(*trainer, options, {}, {}, [&](const OomEvent& failed, const std::optional<OomEvent>& next) {
        announced.emplace_back(failed, next);
      });
    } catch (const OomBackoffExhausted& e) {
      message = e.what();
      history = e.history();
    }
  }
  REQUIRE_THAT(message, Catch::Contains("batch 4") && Catch::Contains("chunk 2") &&
                            Catch::Contains("min_batch_size 4"));
  // The ladder, in order: chunk 2 with checkpointing, then batch 8 -> 4.
  REQUIRE(history.size() == 3);
  CHECK(history[0].batch_size == 8);
  CHECK_FALSE(history[0].item_chunk_size);
  CHECK(history[1].item_chunk_size == std::optional<int64_t>(2));
  CHECK(history[1].gradient_checkpointing);
  CHECK(history[2].batch_size == 4);
  // Each OOM was announced as it happened with what the ladder tries next:
  // the next rung of the history, and nothing after the last.
  REQUIRE(announced.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(describe(announced[i].first) == describe(history[i]));
  for (size_t i = 0; i + 1 < 3; ++i) {
    REQUIRE(announced[i].second);
    CHECK(describe(*announced[i].second) == describe(history[i + 1]));
  }
  CHECK_FALSE(announced[2].second);
  CHECK(trainer->steps_completed() == steps);
  CHECK(test::same_state(weights, test::state_of(trainer->approximator())));
}

TEST_CASE("errors that are not OOM are not retried", "[oom_retry]") {
  auto spec = test::tiny_spec();
  auto trainer = test::tiny_trainer(test::tiny_training(1, 2, 4), spec);
  int calls = 0;
  CHECK_THROWS_AS(fit_with_oom_retry(*trainer, {}, {},
                                     [&](const StepReport&) {
                                       ++calls;
                                       throw std::runtime_error("a bug");
                                     }),
                  std::runtime_error);
  CHECK(calls == 1);
  CHECK(trainer->batch_size() == 4);
}
