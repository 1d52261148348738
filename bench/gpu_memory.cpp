// The CUDA facts the memory model stands on, measured on a real GPU
// (scripts/gpu-check runs both modes; each prints one JSON object):
//
//   bench_gpu_memory context     the CUDA context (device bytes in use beyond
//                                the caching allocator's reserved ones) after
//                                CUDA starts and after the first cuBLAS calls,
//                                and the cuBLAS workspaces the first forward
//                                and backward through a Linear leave allocated,
//                                next to what memory/cublas_workspace predicts
//   bench_gpu_memory oom-ladder  a real CUDA out-of-memory ladder: a GPU-sized
//                                trainer under a CudaMemoryBudget between the
//                                peaks of its cheapest and its starting
//                                configuration; fit_with_oom_retry must step
//                                down and finish every step
#include "memory/cublas_workspace.hpp"
#include "memory/cuda_memory_budget.hpp"
#include "memory/device_profile.hpp"
#include "memory/meter.hpp"
#include "memory/oom.hpp"
#include "models/approximator.hpp"
#include "trials/oom_retry.hpp"
#include "trials/trainer.hpp"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace {

namespace mem = bfhpo::memory;
using bfhpo::models::ApproximatorSpec;
using bfhpo::models::MemoryConfig;

constexpr double kMb = 1024.0 * 1024.0;

double mb(int64_t bytes) { return static_cast<double>(bytes) / kMb; }

nlohmann::json context(const torch::Device& device) {
  mem::MemoryMeter meter(device);  // starts CUDA
  const int64_t after_start = mem::cuda_bytes_outside_allocator(device);
  torch::nn::Linear linear(256, 256);
  linear->to(device);
  const auto x = torch::randn({256, 256}, torch::TensorOptions().device(device));
  const int64_t with_tensors = meter.snapshot().current_bytes;
  {
    torch::NoGradGuard no_grad;
    (void)linear(x);
  }
  const int64_t after_forward = meter.snapshot().current_bytes;
  linear(x).sum().backward();
  for (auto& p : linear->parameters()) p.mutable_grad() = torch::Tensor();
  torch::cuda::synchronize();
  const int64_t after_backward = meter.snapshot().current_bytes;
  const int64_t after_cublas = mem::cuda_bytes_outside_allocator(device);

  const int major = mem::device_compute_capability_major(device);
  const mem::CublasWorkspace predicted = mem::cublas_workspace(major, mem::CublasEnvironment::read());
  return {{"compute_capability_major", major},
          {"total_mb", mb(mem::device_total_bytes(device))},
          {"context_after_start_mb", mb(after_start)},
          {"context_after_cublas_mb", mb(after_cublas)},
          {"assumed_context_mb", mb(mem::kCudaContextBytes)},
          {"forward_workspace_mb", mb(after_forward - with_tensors)},
          {"backward_workspace_mb", mb(after_backward - after_forward)},
          {"measured_workspace_mb", mb(after_backward - with_tensors)},
          {"predicted_workspace_per_handle_mb", mb(predicted.cublas_bytes + predicted.cublaslt_bytes)},
          {"predicted_workspace_mb", mb(predicted.step_bytes())},
          {"warnings", predicted.warnings}};
}

// A network of studies/gpu-full.json's size at its largest shape.
ApproximatorSpec ladder_spec(MemoryConfig memory) {
  ApproximatorSpec spec;
  spec.summary = {64, 256, 2, 128, 4, 2, 32};
  spec.flow.depth = 8;
  spec.flow.subnet_width = 256;
  spec.memory = memory;
  return spec;
}

constexpr int64_t kBatch = 256;
const bfhpo::models::SimulatorSpec kSimulator{"2pl", 2, {50, 50, 500, 500}, {}, {}};

std::unique_ptr<bfhpo::trials::Trainer> ladder_trainer(MemoryConfig memory, int epochs, int num_batches,
                                                       const torch::Device& device) {
  bfhpo::trials::TrainingOptions options;
  options.epochs = epochs;
  options.num_batches = num_batches;
  options.batch_size = kBatch;
  options.validation_sims = 32;
  options.seed = 3;
  torch::manual_seed(options.seed);
  auto approximator = bfhpo::models::make_approximator(ladder_spec(memory), options.seed);
  approximator->to(device);
  return std::make_unique<bfhpo::trials::Trainer>(approximator, kSimulator, options, device);
}

// Allocated-bytes peak of a trainer's second step above the bytes before it was built.
int64_t step_peak(MemoryConfig memory, const torch::Device& device) {
  mem::MemoryMeter meter(device);
  const int64_t before = meter.snapshot().current_bytes;
  auto trainer = ladder_trainer(memory, 1, 2, device);
  trainer->train_step();
  meter.reset_peak();
  trainer->train_step();
  return meter.snapshot().peak_bytes - before;
}

nlohmann::json oom_ladder(const torch::Device& device) {
  const int64_t full = step_peak({}, device);
  const int64_t cheap = step_peak({2, true, std::nullopt}, device);
  mem::safe_empty_cache();
  mem::MemoryMeter meter(device);
  auto trainer = ladder_trainer({}, 2, 4, device);
  const int64_t budget = meter.snapshot().reserved_bytes + (full + cheap) / 2;
  nlohmann::json out = {{"start_peak_mb", mb(full)}, {"cheapest_peak_mb", mb(cheap)}, {"budget_mb", mb(budget)}};
  bfhpo::trials::OomRetryOptions options;
  options.min_batch_size = 32;
  options.ladder = {{16, 8, 4, 2}, {}};
  const auto start = std::chrono::steady_clock::now();
  try {
    const mem::CudaMemoryBudget limit(device, budget);
    const bfhpo::trials::FitResult result = bfhpo::trials::fit_with_oom_retry(*trainer, options);
    nlohmann::json history = nlohmann::json::array();
    for (const auto& e : result.history) history.push_back({{"step", e.step}, {"config", describe(e)}, {"error", e.message}});
    out["recovered"] = result.summary.reason == bfhpo::trials::StopReason::completed && !result.history.empty() &&
                       trainer->steps_completed() == trainer->total_steps();
    out["attempts"] = result.attempts;
    out["history"] = history;
    out["final"] = {{"batch_size", result.batch_size},
                    {"item_chunk_size", result.item_chunk_size ? nlohmann::json(*result.item_chunk_size) : nlohmann::json()},
                    {"gradient_checkpointing", result.gradient_checkpointing}};
    out["steps_completed"] = trainer->steps_completed();
    out["total_steps"] = trainer->total_steps();
    out["validation_loss"] = result.summary.validation_loss;
  } catch (const std::exception& e) {
    out["recovered"] = false;
    out["error"] = e.what();
  }
  out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out["peak_under_budget_mb"] = mb(meter.snapshot().peak_bytes);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "context" && mode != "oom-ladder") {
    std::fprintf(stderr, "usage: bench_gpu_memory context|oom-ladder   (one JSON object on stdout)\n");
    return mode == "--help" ? 0 : 2;
  }
  if (!torch::cuda::is_available()) {
    std::printf("%s\n", nlohmann::json{{"mode", mode}, {"error", "no CUDA device"}}.dump().c_str());
    return 1;
  }
  const torch::Device device(torch::kCUDA, 0);
  nlohmann::json out = mode == "context" ? context(device) : oom_ladder(device);
  out["mode"] = mode;
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}
