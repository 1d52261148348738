// The memory gate: decides, from the analytical estimate alone, whether a
// trial's configuration fits the budget at the worst-case shape (the study's
// max items and max persons, the trial's batch size). When the configuration
// as given does not fit, cheaper summary-network memory configurations are
// tried analytically -- each chunk of the OOM ladder with gradient
// checkpointing, largest (fastest) first -- and the first that fits is
// chosen. When none fits, the trial is pruned with reason "memory" before
// any tensor is allocated.
#pragma once

#include "memory/estimate.hpp"
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
                         const memory::DeviceProfile& profile, const std::vector<int64_t>& item_chunk_ladder);

}  // namespace bfhpo::trials
