#include "trials/probe.hpp"

#include "memory/cpu_memory_tracking.hpp"
#include "memory/meter.hpp"
#include "memory/oom.hpp"

#include <chrono>
#include <cstdio>

namespace bfhpo::trials {
namespace {


std::vector<models::MemoryConfig> grid(const ProbeOptions& options, const memory::StepShape& shape) {
  std::vector<models::MemoryConfig> points{models::MemoryConfig{}};
  for (const auto& rung : options.ladder.rungs_at(shape)) points.push_back(rung);
  return points;
}

std::shared_ptr<models::ContinuousApproximatorImpl> clone_of(models::ContinuousApproximatorImpl& original,
                                                             const models::MemoryConfig& config,
                                                             torch::Device device) {
  models::ApproximatorSpec spec = original.spec();
  spec.memory = config;
  auto clone = models::make_approximator(spec);
  clone->to(device);
  torch::NoGradGuard no_grad;
  const auto source_params = original.named_parameters();
  for (auto& item : clone->named_parameters()) item.value().copy_(source_params[item.key()]);
  const auto source_buffers = original.named_buffers();
  for (auto& item : clone->named_buffers()) item.value().copy_(source_buffers[item.key()]);
  clone->train(original.is_training());
  return clone;
}

// One forward, backward and Adam step of a clone at the worst-case shape.
void training_step(models::ContinuousApproximatorImpl& original, const models::MemoryConfig& config,
                   const models::SimulatedBatch& batch, torch::Device device) {
  auto clone = clone_of(original, config, device);
  torch::optim::Adam optimizer(clone->parameters(), torch::optim::AdamOptions(1e-4));
  clone->loss(batch.responses, batch.item_params, batch.mask).total.backward();
  optimizer.step();
}

}  // namespace

MemoryProbeReport probe_memory_config(models::ContinuousApproximatorImpl& approximator,
                                      const models::SimulatorSpec& simulator_spec, const ProbeOptions& options,
                                      torch::Device device) {
  MemoryProbeReport report;
  memory::MemoryMeter meter(device);
  // The batch is simulated before metering: it exists in the real run too.
  const models::Simulator simulator(simulator_spec, options.seed, device);
  const auto& ranges = simulator_spec.ranges;
  const auto batch = simulator.sample_shape(options.batch_size, ranges.max_items, ranges.max_persons, 0);
  // The probe's random draws (dropout, calibration samples) leave no trace.
  auto generator = at::globalContext().defaultGenerator(device);
  const auto rng_state = generator.get_state();
  for (const auto& config : grid(options, {options.batch_size, ranges.max_items, ranges.max_persons})) {
    ProbePoint point;
    point.config = config;
    memory::safe_empty_cache();
    meter.reset_peak();
    const int64_t before = meter.snapshot().current_bytes;
    const auto start = std::chrono::steady_clock::now();
    try {
      std::optional<memory::CpuMemoryBudget> budget;
      if (device.is_cpu() && options.cpu_budget_bytes) budget.emplace(*options.cpu_budget_bytes);
      training_step(approximator, config, batch, device);
      point.fits = true;
    } catch (const std::exception& error) {
      if (!memory::is_oom_error(error)) throw;
      point.error = std::string(error.what()).substr(0, std::string(error.what()).find('\n'));
    }
    point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    point.peak_mb = static_cast<double>(meter.snapshot().peak_bytes - before) / memory::kBytesPerMb;
    report.points.push_back(point);
    if (point.fits && !report.chosen) report.chosen = config;
    if (point.fits && options.early_stop) break;
  }
  generator.set_state(rng_state);
  memory::safe_empty_cache();
  if (report.chosen) approximator.set_memory_config(*report.chosen);
  return report;
}

nlohmann::json MemoryProbeReport::to_json() const {
  nlohmann::json points_json = nlohmann::json::array();
  for (const auto& p : points)
    points_json.push_back({{"config", models::to_json(p.config)},
                           {"peak_mb", p.peak_mb},
                           {"fits", p.fits},
                           {"seconds", p.seconds},
                           {"error", p.error}});
  return {{"points", points_json}, {"chosen", chosen ? models::to_json(*chosen) : nlohmann::json(nullptr)}};
}

std::string MemoryProbeReport::table() const {
  std::string text = "chunk  persons  checkpointing  peak MB   seconds  fits\n";
  char line[160];
  const auto size = [](const std::optional<int64_t>& chunk) { return chunk ? std::to_string(*chunk) : "all"; };
  for (const auto& p : points) {
    std::snprintf(line, sizeof line, "%-6s %-8s %-14s %8.1f  %7.2f  %s\n",
                  p.config.item_chunk_size ? std::to_string(*p.config.item_chunk_size).c_str() : "none",
                  size(p.config.person_chunk_size).c_str(), p.config.gradient_checkpointing ? "yes" : "no",
                  p.peak_mb, p.seconds, p.fits ? "yes" : "OOM");
    text += line;
  }
  return text;
}

}  // namespace bfhpo::trials
