#include "trials/memory_report.hpp"

#include "common/config_reader.hpp"
#include "hpo/study_spec.hpp"
#include "memory/meter.hpp"
#include "trials/runner.hpp"

#include <cstdio>

namespace bfhpo::trials {
namespace {

// The study's context (settings, device, profile, budget) and the configuration with the params applied.
struct Loaded {
  StudyContext context;
  TrialConfig config;
};

Loaded load(const MemoryRequest& request) {
  Loaded loaded{StudyContext::load(hpo::load_study_spec(request.study_file), nullptr), {}};
  const nlohmann::json params =
      request.params_file.empty() ? nlohmann::json::object() : read_params_file(request.params_file);
  loaded.config = with_params(loaded.context.fixed, params, request.params_file.string());
  if (request.budget_mb) loaded.context.budget_mb = request.budget_mb;
  return loaded;
}

}  // namespace

EstimateReport estimate_configuration(const MemoryRequest& request) {
  const Loaded loaded = load(request);
  const StudyContext& context = loaded.context;
  EstimateReport report;
  report.config = loaded.config;
  report.shape = worst_case_shape(loaded.config);
  report.budget_mb = context.budget_mb;
  report.as_given = memory::estimate_peak_memory(loaded.config.approximator, report.shape, context.profile);
  report.gate = memory_gate(loaded.config, context.budget_mb, context.profile,
                            context.settings.memory.oom_retry.ladder);
  report.warnings = context.profile.warnings;
  return report;
}

MemoryProbeReport probe_configuration(const MemoryRequest& request) {
  const Loaded loaded = load(request);
  const StudyContext& context = loaded.context;
  ProbeOptions options;
  options.batch_size = loaded.config.training.batch_size;
  options.ladder = context.settings.memory.oom_retry.ladder;
  options.seed = loaded.config.training.seed;
  options.early_stop = false;
  if (context.device.is_cpu() && context.budget_mb)
    options.cpu_budget_bytes = static_cast<int64_t>(*context.budget_mb * 1024 * 1024) +
                               memory::MemoryMeter(context.device).snapshot().current_bytes;
  torch::manual_seed(loaded.config.training.seed);
  auto approximator = models::make_approximator(loaded.config.approximator, loaded.config.training.seed);
  approximator->to(context.device);
  return probe_memory_config(*approximator, loaded.config.simulator, options, context.device);
}

nlohmann::json EstimateReport::to_json() const {
  return {{"shape", {{"batch_size", shape.batch_size}, {"n_items", shape.n_items}, {"n_persons", shape.n_persons}}},
          {"budget_mb", budget_mb ? nlohmann::json(*budget_mb) : nlohmann::json()},
          {"estimate", as_given.to_json()},
          {"gate",
           {{"fits", gate.fits}, {"memory", models::to_json(gate.memory)}, {"estimate", gate.estimate.to_json()}}},
          {"warnings", warnings}};
}

std::string EstimateReport::text() const {
  std::string out;
  for (const auto& warning : warnings) out += "warning: " + warning + "\n";
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
    const std::string persons = gate.memory.person_chunk_size
                                    ? ", " + std::to_string(*gate.memory.person_chunk_size) + " persons a chunk"
                                    : "";
    std::snprintf(line, sizeof line, "fits with item chunk %s%s%s (%.1f MB)\n",
                  gate.memory.item_chunk_size ? std::to_string(*gate.memory.item_chunk_size).c_str() : "none",
                  persons.c_str(), gate.memory.gradient_checkpointing ? " and checkpointing" : "",
                  gate.estimate.peak_mb);
  }
  return out + line;
}

}  // namespace bfhpo::trials
