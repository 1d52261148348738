#include "trials/memory_gate.hpp"

namespace bfhpo::trials {

memory::StepShape worst_case_shape(const TrialConfig& config) {
  return {config.training.batch_size, config.simulator.ranges.max_items, config.simulator.ranges.max_persons};
}

GateDecision memory_gate(const TrialConfig& config, std::optional<double> budget_mb,
                         const memory::DeviceProfile& profile, const MemoryLadder& ladder) {
  const memory::StepShape shape = worst_case_shape(config);
  std::vector<models::MemoryConfig> candidates{config.approximator.memory};
  for (const auto& rung : ladder.rungs_at(shape)) candidates.push_back(rung);
  GateDecision decision;
  models::ApproximatorSpec spec = config.approximator;
  for (const auto& candidate : candidates) {
    spec.memory = candidate;
    decision.memory = candidate;
    decision.estimate = memory::estimate_peak_memory(spec, shape, profile);
    decision.fits = !budget_mb || !memory::exceeds_memory_budget(decision.estimate.peak_mb, *budget_mb);
    if (decision.fits) return decision;
  }
  return decision;
}

}  // namespace bfhpo::trials
