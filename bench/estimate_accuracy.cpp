// Accuracy of the analytical memory estimate (memory/estimate.hpp) against
// the meter: for each configuration, build the approximator, run two real
// training steps as trials::Trainer::train_step does (simulate, zero_grad,
// loss, backward, gradient clipping, Adam step), and compare the estimate
// with the metered peak of the second step minus the bytes before the model
// was built. Prints one row per configuration and the summary:
// median |relative error|, worst under- and overestimate, and the time one
// estimate takes (the sampler calls it for every candidate).
//
//   bench_estimate_accuracy [cpu|cuda] [--json FILE]
//
// cpu (default): the tracking allocator's exact bytes. cuda: the caching
// allocator's allocated bytes against the CUDA profile of the environment
// (PYTORCH_ALLOC_CONF rounding), plus GPU-sized configurations; the cuBLAS
// workspaces are created before the first measurement (so every baseline
// holds them) and left out of the estimate -- bench_gpu_memory measures them.
// --json writes the summary and every row to FILE.
#include "memory/cpu_memory_tracking.hpp"
#include "memory/device_profile.hpp"
#include "memory/estimate.hpp"
#include "memory/meter.hpp"
#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using bfhpo::memory::StepShape;
using bfhpo::models::ApproximatorSpec;

struct Config {
  std::string name;
  ApproximatorSpec spec;
  StepShape shape;
  bfhpo::models::SimulatorSpec simulator;  // its ranges are the shape's
};

double measured_peak_mb(const ApproximatorSpec& spec, const StepShape& shape,
                        bfhpo::models::SimulatorSpec simulator_spec, const torch::Device& device) {
  bfhpo::memory::MemoryMeter meter(device);
  const int64_t baseline = meter.snapshot().current_bytes;
  double peak_mb = 0;
  {
    torch::manual_seed(0);
    auto model = bfhpo::models::make_approximator(spec, 0);
    model->to(device);
    model->train();
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-4));
    simulator_spec.ranges = {shape.n_items, shape.n_items, shape.n_persons, shape.n_persons};
    const bfhpo::models::Simulator simulator(simulator_spec, 1, device);
    for (uint64_t step = 0; step < 2; ++step) {
      if (step == 1) meter.reset_peak();
      {
        const auto batch = simulator.sample(shape.batch_size, step);
        adam.zero_grad();
        const auto terms = model->loss(batch.responses, batch.item_params, batch.mask);
        terms.total.backward();
      }
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      adam.step();
      adam.zero_grad();
    }
    peak_mb = static_cast<double>(meter.snapshot().peak_bytes - baseline) / (1024.0 * 1024.0);
  }
  return peak_mb;
}

// Creates the cuBLAS workspaces of both threads a step uses (forward and
// autograd's device thread), so they are in every later baseline.
void create_cublas_workspaces(const torch::Device& device) {
  torch::nn::Linear linear(64, 64);
  linear->to(device);
  linear(torch::randn({64, 64}, torch::TensorOptions().device(device))).sum().backward();
}

std::vector<Config> configurations() {
  std::vector<Config> configs;
  const auto add = [&](const std::string& name, const std::function<void(ApproximatorSpec&, StepShape&)>& edit) {
    Config c{name, {}, {8, 20, 100}, {}};
    c.spec.summary = {16, 32, 2, 32, 4, 1, 16};
    c.spec.flow.depth = 3;
    c.spec.flow.subnet_width = 64;
    edit(c.spec, c.shape);
    configs.push_back(c);
  };
  using bfhpo::models::Activation;
  add("base", [](auto&, auto&) {});
  for (int64_t b : {2, 16, 32}) add("B=" + std::to_string(b), [b](auto&, auto& s) { s.batch_size = b; });
  for (int64_t j : {5, 40, 60}) add("J=" + std::to_string(j), [j](auto&, auto& s) { s.n_items = j; });
  for (int64_t p : {30, 300}) add("P=" + std::to_string(p), [p](auto&, auto& s) { s.n_persons = p; });
  for (int64_t w : {8, 64, 128}) add("cell_width=" + std::to_string(w), [w](auto& a, auto&) { a.summary.cell_mlp_width = w; });
  for (int64_t d : {0, 1, 3}) add("cell_depth=" + std::to_string(d), [d](auto& a, auto&) { a.summary.cell_mlp_depth = d; });
  add("cell_dim=64", [](auto& a, auto&) { a.summary.cell_dim = 64; });
  add("embed=64 heads=8", [](auto& a, auto&) { a.summary.embed_dim = 64; a.summary.attention_heads = 8; });
  add("heads=1", [](auto& a, auto&) { a.summary.attention_heads = 1; });
  add("attention_layers=0", [](auto& a, auto&) { a.summary.attention_layers = 0; });
  add("attention_layers=3 J=60", [](auto& a, auto& s) { a.summary.attention_layers = 3; s.n_items = 60; });
  add("relu", [](auto& a, auto&) { a.summary.activation = Activation::relu; a.flow.activation = Activation::relu; });
  add("gelu", [](auto& a, auto&) { a.summary.activation = Activation::gelu; a.flow.activation = Activation::gelu; });
  add("dropout=0.1", [](auto& a, auto&) { a.summary.dropout = 0.1; a.flow.dropout = 0.1; });
  add("relu dropout=0.1 chunk=5 ckpt", [](auto& a, auto&) {
    a.summary.activation = Activation::relu;
    a.summary.dropout = 0.1;
    a.memory = {5, true, std::nullopt};
  });
  add("heads=8 J=60 summary_dim=64", [](auto& a, auto& s) {
    a.summary.attention_heads = 8;
    a.summary.summary_dim = 64;
    s.n_items = 60;
  });
  add("B=16 P=250 J=50 chunk=10 ckpt", [](auto& a, auto& s) {
    a.summary.cell_mlp_width = 64;
    a.summary.embed_dim = 64;
    a.memory = {10, true, std::nullopt};
    s = {16, 50, 250};
  });
  for (int64_t d : {1, 8}) add("flow_depth=" + std::to_string(d), [d](auto& a, auto&) { a.flow.depth = d; });
  add("subnet 256x3", [](auto& a, auto&) { a.flow.subnet_width = 256; a.flow.subnet_depth = 3; });
  add("subnet_depth=1", [](auto& a, auto&) { a.flow.subnet_depth = 1; });
  for (int64_t c : {1, 5, 7}) {
    add("chunk=" + std::to_string(c), [c](auto& a, auto&) { a.memory.item_chunk_size = c; });
    add("chunk=" + std::to_string(c) + " ckpt",
        [c](auto& a, auto&) { a.memory = {c, true, std::nullopt}; });
  }
  add("ckpt unchunked", [](auto& a, auto&) { a.memory.gradient_checkpointing = true; });
  add("chunk=10 ckpt J=60 P=300", [](auto& a, auto& s) { a.memory = {10, true, std::nullopt}; s.n_items = 60; s.n_persons = 300; });
  add("chunk=10 J=60 P=300", [](auto& a, auto& s) { a.memory.item_chunk_size = 10; s.n_items = 60; s.n_persons = 300; });
  add("persons=25", [](auto& a, auto&) { a.memory.person_chunk_size = 25; });
  add("chunk=5 persons=30 ckpt", [](auto& a, auto&) { a.memory = {5, true, 30}; });
  // Issue 29's real-data shape, 2,000 persons x 50 items: whole, chunked, and chunked over persons too.
  for (const auto& [name, memory] : std::vector<std::pair<std::string, bfhpo::models::MemoryConfig>>{
           {"", {}}, {" chunk=10 ckpt", {10, true, std::nullopt}}, {" chunk=1 ckpt", {1, true, std::nullopt}},
           {" chunk=1 persons=256 ckpt", {1, true, 256}}, {" chunk=5 persons=500", {5, false, 500}}})
    add("B=16 P=2000 J=50" + name, [memory = memory](auto& a, auto& s) { a.memory = memory; s = {16, 50, 2000}; });
  const auto calibrated = [&](const std::string& name, int64_t n, int64_t k, const std::function<void(ApproximatorSpec&, StepShape&)>& more) {
    add("cal n=" + std::to_string(n) + " k=" + std::to_string(k) + name, [n, k, more](auto& a, auto& s) {
      a.calibration.enabled = true;
      a.calibration.n_post_samples = n;
      a.calibration.log_prob_chunk_size = k;
      more(a, s);
    });
  };
  const auto none = [](ApproximatorSpec&, StepShape&) {};
  calibrated("", 20, 5, none);
  calibrated("", 100, 25, none);
  calibrated("", 100, 100, none);
  calibrated("", 200, 10, none);
  calibrated("", 200, 50, none);
  calibrated(" ckpt chunk=5", 100, 25, [](auto& a, auto&) { a.memory = {5, true, std::nullopt}; });
  calibrated(" B=16 subnet=128", 50, 10, [](auto& a, auto& s) { s.batch_size = 16; a.flow.subnet_width = 128; });
  calibrated(" P=30", 100, 20, [](auto&, auto& s) { s.n_persons = 30; });
  calibrated(" flow_depth=6", 60, 15, [](auto& a, auto&) { a.flow.depth = 6; });
  // The other models: their target dimension and response categories.
  const auto model = [&](const std::string& name, const std::string& model_name, int64_t categories, double missing,
                         const std::function<void(ApproximatorSpec&, StepShape&)>& more) {
    add(name, more);
    auto& c = configs.back();
    c.simulator.model = model_name;
    c.simulator.n_categories = categories;
    c.simulator.missing = {missing, missing};
    const auto irt = bfhpo::models::make_item_response_model(c.simulator);
    c.spec.param_dim = irt->param_dim();
    c.spec.n_categories = irt->n_categories();
  };
  model("rasch", "rasch", 2, 0.0, none);
  model("rasch J=40 chunk=5 ckpt", "rasch", 2, 0.0, [](auto& a, auto& s) { a.memory = {5, true, std::nullopt}; s.n_items = 40; });
  model("3pl", "3pl", 2, 0.0, none);
  model("3pl cal n=100 k=25", "3pl", 2, 0.0, [](auto& a, auto&) {
    a.calibration.enabled = true;
    a.calibration.n_post_samples = 100;
    a.calibration.log_prob_chunk_size = 25;
  });
  model("grm K=3", "grm", 3, 0.0, none);
  model("grm K=5", "grm", 5, 0.0, none);
  model("grm K=7 P=300", "grm", 7, 0.0, [](auto&, auto& s) { s.n_persons = 300; });
  model("grm K=5 chunk=5 ckpt", "grm", 5, 0.0, [](auto& a, auto&) { a.memory = {5, true, std::nullopt}; });
  model("2pl missing=0.3", "2pl", 2, 0.3, none);
  model("grm K=5 missing=0.2 B=16", "grm", 5, 0.2, [](auto&, auto& s) { s.batch_size = 16; });
  return configs;
}

// Configurations of studies/gpu-full.json's size, for a GPU.
std::vector<Config> gpu_configurations() {
  std::vector<Config> configs;
  const auto add = [&](const std::string& name, int64_t batch, bfhpo::models::MemoryConfig memory) {
    Config c{name, {}, {batch, 50, 500}, {}};
    c.spec.summary = {64, 256, 2, 128, 4, 2, 32};
    c.spec.flow.depth = 8;
    c.spec.flow.subnet_width = 256;
    c.spec.memory = memory;
    configs.push_back(c);
  };
  for (int64_t b : {32, 64, 128, 256}) add("gpu B=" + std::to_string(b) + " J=50 P=500", b, {});
  for (int64_t b : {64, 256}) add("gpu B=" + std::to_string(b) + " chunk=10 ckpt", b, {10, true, std::nullopt});
  add("gpu B=256 chunk=2 ckpt", 256, {2, true, std::nullopt});
  return configs;
}

}  // namespace

int main(int argc, char** argv) {
  torch::Device device = torch::kCPU;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "cuda") == 0) {
      device = torch::Device(torch::kCUDA, 0);
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "cpu") != 0) {
      std::fprintf(stderr, "usage: bench_estimate_accuracy [cpu|cuda] [--json FILE]\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  namespace mem = bfhpo::memory;
  mem::DeviceProfile profile;
  std::vector<Config> configs = configurations();
  if (device.is_cuda()) {
    if (!torch::cuda::is_available()) {
      std::fprintf(stderr, "bench_estimate_accuracy: no CUDA device\n");
      return 1;
    }
    create_cublas_workspaces(device);
    profile = mem::device_profile(device);
    profile.context_bytes = 0;    // outside the allocator: not metered
    profile.workspace_bytes = 0;  // in every baseline (create_cublas_workspaces)
    for (const auto& warning : profile.warnings) std::printf("warning: %s\n", warning.c_str());
    const auto more = gpu_configurations();
    configs.insert(configs.end(), more.begin(), more.end());
  } else {
    mem::install_cpu_memory_tracking();
    torch::set_num_threads(1);
  }
  std::printf("%-32s %10s %10s %9s\n", "configuration", "est MB", "meas MB", "rel err");
  std::vector<double> errors;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : configs) {
    const double estimated = mem::estimate_peak_memory_mb(c.spec, c.shape, profile);
    const double measured = measured_peak_mb(c.spec, c.shape, c.simulator, device);
    const double rel = (estimated - measured) / measured;
    errors.push_back(rel);
    rows.push_back({{"configuration", c.name}, {"estimated_mb", estimated}, {"measured_mb", measured}, {"relative_error", rel}});
    std::printf("%-32s %10.2f %10.2f %+8.1f%%\n", c.name.c_str(), estimated, measured, 100 * rel);
    std::fflush(stdout);
  }
  std::vector<double> abs_errors;
  for (double e : errors) abs_errors.push_back(std::abs(e));
  std::nth_element(abs_errors.begin(), abs_errors.begin() + abs_errors.size() / 2, abs_errors.end());
  const double median = abs_errors[abs_errors.size() / 2];
  const double worst_under = *std::min_element(errors.begin(), errors.end());
  const double worst_over = *std::max_element(errors.begin(), errors.end());
  std::printf("\n%zu configurations on %s: median |rel err| %.1f%%, worst underestimate %+.1f%%, worst overestimate %+.1f%%\n",
              errors.size(), device.str().c_str(), 100 * median, 100 * std::min(worst_under, 0.0),
              100 * std::max(worst_over, 0.0));
  std::printf("targets: median <= 5%%, no underestimate worse than -10%%: %s\n",
              median <= 0.05 && worst_under >= -0.10 ? "met" : "NOT met");
  if (!json_path.empty()) {
    std::ofstream(json_path) << nlohmann::json{{"device", device.str()},
                                               {"configurations", errors.size()},
                                               {"median_abs_relative_error", median},
                                               {"worst_underestimate", std::min(worst_under, 0.0)},
                                               {"worst_overestimate", std::max(worst_over, 0.0)},
                                               {"allocator", profile.allocator.source},
                                               {"warnings", profile.warnings},
                                               {"rows", rows}}
                                    .dump(1)
                             << "\n";
  }

  constexpr int kCalls = 100000;
  double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) {
    const auto& c = configs[static_cast<size_t>(i) % configs.size()];
    sink += mem::estimate_peak_memory_mb(c.spec, c.shape, profile);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("estimate_peak_memory_mb: %.2f us per call (%d calls, checksum %.0f)\n", 1e6 * seconds / kCalls, kCalls,
              sink);
  return 0;
}
