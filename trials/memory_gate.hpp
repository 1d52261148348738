// The memory gate: decides, from the analytical estimate alone, whether a
// trial's configuration fits the budget at the worst-case shape (the study's
// max items and max persons, the trial's batch size). When the configuration
// as given does not fit, cheaper summary-network memory configurations are
// tried analytically -- the rungs of the memory ladder that cut something at
// that shape (trials/memory_ladder.hpp: item chunks with gradient
// checkpointing, largest (fastest) first, then person chunks) -- and the
// first that fits is chosen. When none fits, the trial is pruned with reason "memory" before
// any tensor is allocated.
#pragma once

#include "memory/estimate.hpp"
#include "trials/memory_ladder.hpp"
#include "trials/trial_config.hpp"

#include <optional>
#include <vector>

namespace bfhpo::trials {

struct GateDecision {
  bool fits = true;
  models::MemoryConfig memory;      // the configuration to train with (when fits)
  memory::MemoryEstimate estimate;  // of that configuration, or of the cheapest tried when none fits
};

memory::StepShape worst_case_shape(const TrialConfig& config);

// No budget: everything fits (the estimate is still computed and recorded).
GateDecision memory_gate(const TrialConfig& config, std::optional<double> budget_mb,
                         const memory::DeviceProfile& profile, const MemoryLadder& ladder);

}  // namespace bfhpo::trials
