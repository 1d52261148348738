// `bfhpo estimate` and `bfhpo probe`: the memory view of one configuration
// (the study's fixed values plus PARAMS.json) without running a study.
//   estimate: the analytical estimate at the worst-case shape, term by term,
//             and what the memory gate decides under the study's budget.
//   probe:    one real training step per memory configuration (probe.hpp),
//             under a CPU budget when one is given or set in the study.
#pragma once

#include "trials/memory_gate.hpp"
#include "trials/probe.hpp"
#include "trials/trial_config.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct MemoryRequest {
  std::filesystem::path study_file;
  std::filesystem::path params_file;  // empty: the study's fixed values
  std::optional<double> budget_mb;    // overrides the study's memory.budget_mb
};

struct EstimateReport {
  TrialConfig config;
  memory::StepShape shape;
  std::optional<double> budget_mb;
  memory::MemoryEstimate as_given;  // the configuration's own memory config
  GateDecision gate;
  std::vector<std::string> warnings;  // why the estimate may be unreliable on this device

  nlohmann::json to_json() const;
  std::string text() const;
};

EstimateReport estimate_configuration(const MemoryRequest& request);
MemoryProbeReport probe_configuration(const MemoryRequest& request);

}  // namespace bfhpo::trials
