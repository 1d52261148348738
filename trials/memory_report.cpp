#include "trials/memory_report.hpp"

#include "common/json_file.hpp"
#include "hpo/study_spec.hpp"
#include "memory/meter.hpp"
#include "trials/study_settings.hpp"

#include <cstdio>

namespace bfhpo::trials {
namespace {

struct Loaded {
  TrialConfig config;
  StudySettings settings;
  torch::Device device = torch::kCPU;
  std::optional<double> budget_mb;
};

Loaded load(const MemoryRequest& request) {
  const hpo::StudySpec spec = hpo::load_study_spec(request.study_file);
  Loaded loaded;
  const nlohmann::json params =
      request.params_file.empty() ? nlohmann::json::object() : read_params_file(request.params_file);
  loaded.config = make_trial_config(spec, params, request.params_file.string());
  loaded.settings = parse_study_settings(spec);
  loaded.device = resolve_device(loaded.config.device, spec.source.string());
  loaded.budget_mb = request.budget_mb ? request.budget_mb
                                       : loaded.settings.memory.budget_for(memory::device_total_bytes(loaded.device));
  return loaded;
}

}  // namespace

EstimateReport estimate_configuration(const MemoryRequest& request) {
  const Loaded loaded = load(request);
  EstimateReport report;
  report.config = loaded.config;
  report.shape = worst_case_shape(loaded.config);
  report.budget_mb = loaded.budget_mb;
  const memory::DeviceProfile profile = memory::device_profile(loaded.device);
  report.as_given = memory::estimate_peak_memory(loaded.config.approximator, report.shape, profile);
  report.gate = memory_gate(loaded.config, loaded.budget_mb, profile, loaded.settings.memory.oom_retry.item_chunk_ladder);
  return report;
}

MemoryProbeReport probe_configuration(const MemoryRequest& request) {
  const Loaded loaded = load(request);
  ProbeOptions options;
  options.batch_size = loaded.config.training.batch_size;
  options.item_chunk_ladder = loaded.settings.memory.oom_retry.item_chunk_ladder;
  options.seed = loaded.config.training.seed;
  options.early_stop = false;
  if (loaded.device.is_cpu() && loaded.budget_mb)
    options.cpu_budget_bytes = static_cast<int64_t>(*loaded.budget_mb * 1024 * 1024) +
                               memory::MemoryMeter(loaded.device).snapshot().current_bytes;
  torch::manual_seed(loaded.config.training.seed);
  auto approximator = models::make_approximator(loaded.config.approximator, loaded.config.training.seed);
  approximator->to(loaded.device);
  return probe_memory_config(*approximator, loaded.config.ranges, options, loaded.device);
}

nlohmann::json EstimateReport::to_json() const {
  return {{"shape", {{"batch_size", shape.batch_size}, {"n_items", shape.n_items}, {"n_persons", shape.n_persons}}},
          {"budget_mb", budget_mb ? nlohmann::json(*budget_mb) : nlohmann::json()},
          {"estimate", as_given.to_json()},
          {"gate",
           {{"fits", gate.fits}, {"memory", models::to_json(gate.memory)}, {"estimate", gate.estimate.to_json()}}}};
}

std::string EstimateReport::text() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "worst-case step: batch %lld, %lld items, %lld persons\n",
                static_cast<long long>(shape.batch_size), static_cast<long long>(shape.n_items),
                static_cast<long long>(shape.n_persons));
  out += line;
  const nlohmann::json terms = as_given.to_json();
  for (const auto& [term, value] : terms.items()) {
    if (term == "peak_mb") continue;
    std::snprintf(line, sizeof line, "  %-16s %10.2f MB\n", term.c_str(), value.get<double>());
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-16s %10.2f MB  (as configured)\n", "peak_mb", as_given.peak_mb);
  out += line;
  if (!budget_mb) return out + "no memory budget: the gate lets everything through\n";
  std::snprintf(line, sizeof line, "budget %.1f MB: ", *budget_mb);
  out += line;
  if (!gate.fits) {
    std::snprintf(line, sizeof line, "PRUNED for memory (cheapest configuration %.1f MB)\n", gate.estimate.peak_mb);
  } else {
    std::snprintf(line, sizeof line, "fits with item chunk %s%s (%.1f MB)\n",
                  gate.memory.item_chunk_size ? std::to_string(*gate.memory.item_chunk_size).c_str() : "none",
                  gate.memory.gradient_checkpointing ? " and checkpointing" : "", gate.estimate.peak_mb);
  }
  return out + line;
}

}  // namespace bfhpo::trials
