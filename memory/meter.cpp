#include "memory/meter.hpp"

#include "memory/cpu_memory_tracking.hpp"

#if defined(BFHPO_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#define BFHPO_MEMORY_HAS_CUDA 1
#endif

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bfhpo::memory {
namespace {


[[noreturn]] void unsupported(const torch::Device& device) {
  throw std::invalid_argument("bfhpo memory meter: unsupported device " + device.str() +
                              " (CPU, or CUDA in a CUDA build)");
}

#ifdef BFHPO_MEMORY_HAS_CUDA
int cuda_index(const torch::Device& device) {
  return device.has_index() ? static_cast<int>(device.index())
                            : static_cast<int>(c10::cuda::current_device());
}

MemorySnapshot cuda_snapshot(const torch::Device& device) {
  // StatArray index 0 is StatType::AGGREGATE (small and large pools together).
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(cuda_index(device));
  return {stats.allocated_bytes[0].current, stats.allocated_bytes[0].peak,
          stats.reserved_bytes[0].current};
}
#endif

}  // namespace

MemoryMeter::MemoryMeter(torch::Device device) : device_(device) {
  if (device_.is_cpu()) {
    install_cpu_memory_tracking();
    return;
  }
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device_.is_cuda()) {
    // The caching allocator has per-device state (and statistics) only after
    // CUDA's lazy initialisation, which the first CUDA tensor triggers.
    (void)at::empty({0}, at::TensorOptions().device(device_));
    return;
  }
#endif
  unsupported(device_);
}

MemorySnapshot MemoryMeter::snapshot() const {
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device_.is_cuda()) return cuda_snapshot(device_);
#endif
  const int64_t current = cpu_current_bytes();
  // An allocation between the two reads may count before it raises the peak.
  return {current, std::max(current, cpu_peak_bytes()), current + cpu_cached_bytes()};
}

void MemoryMeter::reset_peak() {
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device_.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(cuda_index(device_));
    return;
  }
#endif
  reset_cpu_peak();
}

double MemoryMeter::peak_mb() const {
  return static_cast<double>(snapshot().peak_bytes) / kBytesPerMb;
}

int64_t device_total_bytes(const torch::Device& device) {
  if (device.is_cpu()) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) {
      throw std::runtime_error("bfhpo: sysconf cannot tell the physical memory size");
    }
    return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
  }
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device.is_cuda()) {
    return static_cast<int64_t>(at::cuda::getDeviceProperties(cuda_index(device))->totalGlobalMem);
  }
#endif
  unsupported(device);
}

int device_compute_capability_major(const torch::Device& device) {
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(cuda_index(device))->major;
#endif
  unsupported(device);
}

int64_t cuda_bytes_outside_allocator(const torch::Device& device) {
#ifdef BFHPO_MEMORY_HAS_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(cuda_index(device)));
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess)
      throw std::runtime_error("bfhpo memory meter: cudaMemGetInfo failed on " + device.str());
    return static_cast<int64_t>(total - free) - cuda_snapshot(device).reserved_bytes;
  }
#endif
  unsupported(device);
}

}  // namespace bfhpo::memory
