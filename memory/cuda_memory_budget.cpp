#include "memory/cuda_memory_budget.hpp"

#include "memory/meter.hpp"

#if defined(BFHPO_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define BFHPO_MEMORY_HAS_CUDA 1
#endif

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bfhpo::memory {
namespace {

[[noreturn]] void not_cuda(const torch::Device& device) {
  throw std::invalid_argument("CudaMemoryBudget: " + device.str() + " is not a CUDA device of this build");
}

void set_fraction(const torch::Device& device, [[maybe_unused]] double fraction) {
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device.is_cuda()) {
    const auto index = device.has_index() ? device.index() : static_cast<c10::DeviceIndex>(c10::cuda::current_device());
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, index);
    return;
  }
#endif
  not_cuda(device);
}

}  // namespace

CudaMemoryBudget::CudaMemoryBudget(const torch::Device& device, int64_t bytes) : device_(device) {
  if (!device.is_cuda()) not_cuda(device);
  if (bytes <= 0) throw std::invalid_argument("CudaMemoryBudget: the budget must be positive, got " + std::to_string(bytes));
  const double total = static_cast<double>(device_total_bytes(device));
  set_fraction(device, std::min(1.0, static_cast<double>(bytes) / total));
}

CudaMemoryBudget::~CudaMemoryBudget() { set_fraction(device_, 1.0); }

}  // namespace bfhpo::memory
