#include "memory/cuda_memory_budget.hpp"

#include "memory/meter.hpp"
#include "memory/oom.hpp"

#include <catch2/catch.hpp>
#include <torch/torch.h>

using namespace bfhpo::memory;

TEST_CASE("CudaMemoryBudget refuses devices that are not CUDA and budgets that are not positive") {
  CHECK_THROWS_AS(CudaMemoryBudget(torch::kCPU, 1 << 20), std::invalid_argument);
  CHECK_THROWS_AS(CudaMemoryBudget(torch::Device(torch::kCUDA, 0), 0), std::invalid_argument);
}

// Runs where CUDA is (scripts/gpu-check runs the suite on a GPU).
TEST_CASE("CudaMemoryBudget: an allocation beyond the budget is the allocator's own OOM, and only in scope") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: the budget's effect is checked on a GPU only");
    return;
  }
  const torch::Device cuda(torch::kCUDA, 0);
  safe_empty_cache();
  const int64_t reserved = MemoryMeter(cuda).snapshot().reserved_bytes;
  const int64_t budget = reserved + (int64_t{256} << 20);
  {
    const CudaMemoryBudget limit(cuda, budget);
    const auto small = torch::empty({int64_t{64} << 20}, torch::TensorOptions().device(cuda).dtype(torch::kUInt8));
    try {
      (void)torch::empty({int64_t{1} << 30}, torch::TensorOptions().device(cuda).dtype(torch::kUInt8));
      FAIL("1 GiB fitted a 256 MiB budget");
    } catch (const std::exception& e) {
      CHECK(is_oom_error(e));
    }
  }
  safe_empty_cache();
  CHECK(torch::empty({int64_t{1} << 30}, torch::TensorOptions().device(cuda).dtype(torch::kUInt8)).numel() ==
        int64_t{1} << 30);
}
