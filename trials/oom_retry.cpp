#include "trials/oom_retry.hpp"

#include "common/number_format.hpp"
#include "memory/oom.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::trials {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

OomEvent event_of(Trainer& trainer, const std::exception& error) {
  const models::MemoryConfig& memory = trainer.approximator().spec().memory;
  OomEvent event;
  event.step = trainer.steps_completed();
  event.batch_size = trainer.batch_size();
  event.item_chunk_size = memory.item_chunk_size;
  event.gradient_checkpointing = memory.gradient_checkpointing;
  event.person_chunk_size = memory.person_chunk_size;
  event.bytes_requested = memory::oom_requested_bytes(error);
  event.message = first_line(error.what());
  return event;
}

// The next cheaper configuration, or false when none is left.
bool step_down(Trainer& trainer, const OomRetryOptions& options) {
  const auto& ranges = trainer.simulator_spec().ranges;
  const memory::StepShape largest{trainer.batch_size(), ranges.max_items, ranges.max_persons};
  if (const auto cheaper = options.ladder.below(trainer.approximator().spec().memory, largest)) {
    trainer.approximator().set_memory_config(*cheaper);
    return true;
  }
  const auto smaller = std::min(trainer.batch_size() - 1,
                                static_cast<int64_t>(std::floor(trainer.batch_size() / options.backoff_factor)));
  if (smaller < options.min_batch_size) return false;
  trainer.set_batch_size(smaller);
  return true;
}

}  // namespace

std::optional<ConfigProblem> OomRetryOptions::problem() const {
  if (min_batch_size < 1)
    return ConfigProblem{"min_batch_size", "must be at least 1, got " + std::to_string(min_batch_size), "give e.g. 4"};
  if (!(backoff_factor > 1))
    return ConfigProblem{"backoff_factor", "must be > 1, got " + format_exact(backoff_factor), "give e.g. 2"};
  return ladder.problem();
}

models::MemoryConfig memory_of(const OomEvent& event) {
  return {event.item_chunk_size, event.gradient_checkpointing, event.person_chunk_size};
}

std::string describe(const OomEvent& event) {
  return "batch " + std::to_string(event.batch_size) + ", " + describe(memory_of(event));
}

FitResult fit_with_oom_retry(Trainer& trainer, const OomRetryOptions& options, const EpochCallback& on_epoch,
                             const StepCallback& on_step, const OomCallback& on_oom) {
  if (const auto problem = options.problem())
    throw std::invalid_argument("fit_with_oom_retry: " + problem->field + " " + problem->problem);
  if (options.start_batch_size) trainer.set_batch_size(*options.start_batch_size);
  FitResult result;
  while (true) {
    try {
      result.summary = trainer.fit(on_epoch, on_step);
      break;
    } catch (const std::exception& error) {
      if (!memory::is_oom_error(error)) throw;
      result.history.push_back(event_of(trainer, error));
    }
    trainer.optimizer().zero_grad();
    memory::safe_empty_cache();
    const bool retry = step_down(trainer, options);
    if (on_oom) {
      std::optional<OomEvent> next;
      if (retry) {
        const models::MemoryConfig& memory = trainer.approximator().spec().memory;
        next = result.history.back();
        next->batch_size = trainer.batch_size();
        next->item_chunk_size = memory.item_chunk_size;
        next->gradient_checkpointing = memory.gradient_checkpointing;
        next->person_chunk_size = memory.person_chunk_size;
        next->bytes_requested.reset();
        next->message.clear();
      }
      on_oom(result.history.back(), next);
    }
    if (!retry)
      throw OomBackoffExhausted("out of memory at the smallest configuration allowed (" +
                                    describe(result.history.back()) + ", min_batch_size " +
                                    std::to_string(options.min_batch_size) +
                                    "). Fix: lower memory.oom_retry.min_batch_size, shrink the network, or raise the "
                                    "memory budget",
                                result.history);
  }
  const models::MemoryConfig& memory = trainer.approximator().spec().memory;
  result.batch_size = trainer.batch_size();
  result.item_chunk_size = memory.item_chunk_size;
  result.gradient_checkpointing = memory.gradient_checkpointing;
  result.person_chunk_size = memory.person_chunk_size;
  result.attempts = static_cast<int>(result.history.size()) + 1;
  return result;
}

}  // namespace bfhpo::trials
