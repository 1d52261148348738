// probe_memory_config: measures, instead of estimating, which memory
// configuration of the summary network fits. For each grid point, cheapest
// compute first (no chunk without checkpointing, then the memory ladder's
// rungs that cut something at the shape: checkpointed item chunks from large
// to small, then person chunks), it runs one real training step -- forward, backward and an Adam
// step -- at the worst-case shape (max items, max persons, the batch size)
// on a disposable clone of the approximator, metering the peak. The
// original's weights, buffers and optimizer state are untouched (the clone is
// built from the spec and its tensors copied; the clone has its own Adam).
// With early_stop it stops at the first point that fits.
//
// The chosen point (the first that fits) is applied to the original's summary
// network. When none fits, nothing is applied and `chosen` is empty.
//
// On CPU, a budget makes "fits" meaningful (memory/cpu_memory_tracking.hpp);
// on CUDA the device's own memory decides.
#pragma once

#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/memory_ladder.hpp"

#include <optional>
#include <vector>

namespace bfhpo::trials {

struct ProbeOptions {
  int64_t batch_size = 32;
  MemoryLadder ladder;
  std::optional<int64_t> cpu_budget_bytes;  // CPU: enforce this budget during each step
  bool early_stop = true;
  uint64_t seed = 1;
};

struct ProbePoint {
  models::MemoryConfig config;
  double peak_mb = 0.0;   // measured peak of the step above the memory held before the probe
  bool fits = false;
  double seconds = 0.0;
  std::string error;      // the OOM message when it did not fit
};

struct MemoryProbeReport {
  std::vector<ProbePoint> points;           // every point tried, in order
  std::optional<models::MemoryConfig> chosen;

  nlohmann::json to_json() const;
  std::string table() const;
};

MemoryProbeReport probe_memory_config(models::ContinuousApproximatorImpl& approximator,
                                      const models::SimulatorSpec& simulator,
                                      const ProbeOptions& options, torch::Device device);

}  // namespace bfhpo::trials
