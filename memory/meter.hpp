// MemoryMeter: current and peak bytes of one device, the measurement the
// memory estimator is checked against and the probe reports.
//   CPU:  the tracking allocator's exact tensor bytes (cpu_memory_tracking.hpp,
//         installed by the meter); reserved = current + the freed blocks
//         it keeps for reuse (cpu_cached_bytes).
//   CUDA: the caching allocator's statistics for the device: allocated bytes
//         (current, peak) and reserved bytes (allocated + cached segments).
// Peaks are process wide per device: two meters on one device share them.
// Other device types are std::invalid_argument. MB means 2^20 bytes.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace bfhpo::memory {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

struct MemorySnapshot {
  int64_t current_bytes = 0;   // bytes held by live tensors
  int64_t peak_bytes = 0;      // most current_bytes since the last reset_peak
  int64_t reserved_bytes = 0;  // bytes taken from the device (>= current_bytes)
};

class MemoryMeter {
 public:
  explicit MemoryMeter(torch::Device device);

  MemorySnapshot snapshot() const;
  // Sets the peak to the current bytes.
  void reset_peak();
  double peak_mb() const;
  torch::Device device() const { return device_; }

 private:
  torch::Device device_;
};

// Memory of the device, for a budget of "auto": the GPU's total memory, or the
// machine's physical RAM (sysconf) for the CPU. Other devices: invalid_argument.
int64_t device_total_bytes(const torch::Device& device);

// CUDA only (else std::invalid_argument): the GPU's compute capability major
// version (9 for Hopper).
int device_compute_capability_major(const torch::Device& device);

// CUDA only (else std::invalid_argument): bytes in use on the GPU that the
// caching allocator has not reserved -- the CUDA context, cuBLAS's and the
// driver's own buffers, and other processes on the same GPU.
int64_t cuda_bytes_outside_allocator(const torch::Device& device);

}  // namespace bfhpo::memory
