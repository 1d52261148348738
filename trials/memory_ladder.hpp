// The memory ladder: the summary network's memory configurations that trade
// compute for memory, in the order the memory gate, the probe and the OOM
// retry try them, cheapest compute first: each item chunk of `item_chunks`
// with gradient checkpointing, then, at the smallest item chunk, each person
// chunk of `person_chunks` (what is left to cut when one item's persons do
// not fit: 1,500 to 5,000 persons is an ordinary real data set).
#pragma once

#include "common/config_reader.hpp"
#include "memory/estimate.hpp"
#include "models/approximator_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct MemoryLadder {
  std::vector<int64_t> item_chunks = {16, 8, 4, 2, 1};
  std::vector<int64_t> person_chunks = {1024, 256, 64};

  // Both lists strictly decreasing whole numbers >= 1; the item chunks not empty.
  std::optional<ConfigProblem> problem() const;

  // Every rung, in order.
  std::vector<models::MemoryConfig> rungs() const;
  // The rungs that cut something at `shape`: an item chunk below its items,
  // a person chunk below its persons.
  std::vector<models::MemoryConfig> rungs_at(const memory::StepShape& shape) const;
  // The first rung of rungs_at(shape) cheaper than `current` (none: the
  // ladder is spent). A person chunk of `current` smaller than the rung's is kept.
  std::optional<models::MemoryConfig> below(const models::MemoryConfig& current,
                                            const memory::StepShape& shape) const;
};

// "chunk 8, checkpointing", "chunk 1, 256 persons a chunk, checkpointing", "chunk none".
std::string describe(const models::MemoryConfig& memory);

}  // namespace bfhpo::trials
