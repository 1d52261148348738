// fit_with_oom_retry: trains to the end and survives out-of-memory errors.
// When a step runs out of memory, the failed step's tensors are dropped, the
// allocator cache is cleared, the configuration is made cheaper and the SAME
// step is tried again -- weights, optimizer state and the step/epoch position
// are those of the last completed step, so no progress is lost.
//
// The ladder, in order:
//   1. the memory ladder's next rung below the current configuration
//      (trials/memory_ladder.hpp): smaller item chunks with gradient
//      checkpointing, then person chunks at the smallest item chunk --
//      those that cut something at the simulator's largest shape;
//   2. once the ladder is exhausted, batch_size /= backoff_factor (rounded
//      down, at least one less);
//   3. below min_batch_size: OomBackoffExhausted, naming the last
//      configuration tried; the trainer is left at its last completed step.
#pragma once

#include "common/config_reader.hpp"
#include "trials/memory_ladder.hpp"
#include "trials/trainer.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct OomRetryOptions {
  std::optional<int64_t> start_batch_size;  // none: the trainer's batch size
  int64_t min_batch_size = 4;
  double backoff_factor = 2.0;
  MemoryLadder ladder;

  // min_batch_size >= 1, backoff_factor > 1, the ladder's own problem().
  std::optional<ConfigProblem> problem() const;
};

// One rung of the ladder: the configuration a step ran out of memory with.
struct OomEvent {
  int step = 0;                              // global step that failed (0-based)
  int64_t batch_size = 0;
  std::optional<int64_t> item_chunk_size;
  bool gradient_checkpointing = false;
  std::optional<int64_t> person_chunk_size;
  std::optional<int64_t> bytes_requested;    // the allocation that failed, when the error says
  std::string message;                       // the first line of the error
};

struct FitResult {
  int64_t batch_size = 0;                    // the configuration training finished with
  std::optional<int64_t> item_chunk_size;
  bool gradient_checkpointing = false;
  std::optional<int64_t> person_chunk_size;
  int attempts = 1;                          // 1 + number of OOMs survived
  std::vector<OomEvent> history;
  TrainingSummary summary;
};

class OomBackoffExhausted : public std::runtime_error {
 public:
  OomBackoffExhausted(const std::string& message, std::vector<OomEvent> history)
      : std::runtime_error(message), history_(std::move(history)) {}
  const std::vector<OomEvent>& history() const { return history_; }

 private:
  std::vector<OomEvent> history_;
};

// Called after each OOM, before the retry: the configuration that failed and
// the one the ladder tries next (none: it gives up, OomBackoffExhausted follows).
using OomCallback = std::function<void(const OomEvent& failed, const std::optional<OomEvent>& next)>;

FitResult fit_with_oom_retry(Trainer& trainer, const OomRetryOptions& options = {},
                             const EpochCallback& on_epoch = {}, const StepCallback& on_step = {},
                             const OomCallback& on_oom = {});

std::string describe(const OomEvent& event);  // "batch 32, chunk 8, checkpointing"
// The memory configuration an event names.
models::MemoryConfig memory_of(const OomEvent& event);

}  // namespace bfhpo::trials
