#include "memory/device_profile.hpp"

#include "memory/cublas_workspace.hpp"
#include "memory/meter.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace bfhpo::memory {
namespace {

// PyTorch's CUDACachingAllocator constants (c10/cuda/CUDACachingAllocator.cpp).
constexpr int64_t kMinBlockSize = 512;
constexpr int64_t kSmallSize = int64_t{1} << 20;
constexpr int64_t kSmallBuffer = int64_t{2} << 20;
constexpr int64_t kLargeBuffer = int64_t{20} << 20;
constexpr int64_t kMinLargeAlloc = int64_t{10} << 20;
constexpr int64_t kRoundLarge = int64_t{2} << 20;

int64_t round_up(int64_t bytes, int64_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

void check_request(int64_t requested_bytes) {
  if (requested_bytes < 0) {
    throw std::invalid_argument("device allocation of a negative size: " +
                                std::to_string(requested_bytes) + " bytes");
  }
}

bool is_power_of_two(int64_t value) { return (value & (value - 1)) == 0; }

int64_t floor_power_of_two(int64_t value) {
  int64_t power = 1;
  while (power <= value / 2) power *= 2;
  return power;
}

// roundup_power2_next_division: the interval between two powers of two is cut
// into `divisions` equal steps and the request goes up to the next step.
int64_t round_to_division(int64_t bytes, int64_t divisions) {
  if (is_power_of_two(bytes)) return bytes;
  const int64_t floor = floor_power_of_two(bytes);
  const int64_t step = floor / divisions;
  if (step == 0) return 2 * floor;
  return round_up(bytes, step);
}

int64_t cuda_block_bytes(const CudaAllocatorSettings& settings, int64_t requested_bytes) {
  if (requested_bytes < kMinBlockSize) return kMinBlockSize;
  const int64_t divisions = settings.divisions_for(requested_bytes);
  if (divisions > 1 && requested_bytes > kMinBlockSize * divisions) return round_to_division(requested_bytes, divisions);
  return round_up(requested_bytes, kMinBlockSize);
}

// Expandable segments grow by pages of kSmallBuffer (small pool) or kLargeBuffer.
int64_t cuda_segment_bytes(const CudaAllocatorSettings& settings, int64_t block_bytes) {
  if (settings.expandable_segments) return round_up(block_bytes, block_bytes <= kSmallSize ? kSmallBuffer : kLargeBuffer);
  if (block_bytes <= kSmallSize) return kSmallBuffer;
  if (block_bytes < kMinLargeAlloc) return kLargeBuffer;
  return round_up(block_bytes, kRoundLarge);
}

}  // namespace

int64_t DeviceProfile::usable_bytes() const {
  const int64_t usable = total_bytes - context_bytes;
  if (kind != DeviceKind::cuda || !allocator.per_process_memory_fraction) return usable;
  return std::min(usable, static_cast<int64_t>(*allocator.per_process_memory_fraction * static_cast<double>(total_bytes)));
}

DeviceProfile cpu_device_profile(int64_t total_bytes) {
  DeviceProfile profile;
  profile.total_bytes = total_bytes;
  return profile;
}

DeviceProfile cuda_device_profile(int64_t total_bytes, int64_t context_bytes, CudaAllocatorSettings allocator,
                                  int64_t workspace_bytes) {
  DeviceProfile profile;
  profile.kind = DeviceKind::cuda;
  profile.total_bytes = total_bytes;
  profile.context_bytes = context_bytes;
  profile.workspace_bytes = workspace_bytes;
  profile.warnings = allocator.warnings;
  profile.allocator = std::move(allocator);
  return profile;
}

DeviceProfile device_profile(const c10::Device& device) {
  const int64_t total = device_total_bytes(device);
  if (!device.is_cuda()) return cpu_device_profile(total);
  const CublasWorkspace workspace =
      cublas_workspace(device_compute_capability_major(device), CublasEnvironment::read());
  DeviceProfile profile =
      cuda_device_profile(total, kCudaContextBytes, cuda_allocator_settings_from_environment(), workspace.step_bytes());
  profile.warnings.insert(profile.warnings.end(), workspace.warnings.begin(), workspace.warnings.end());
  return profile;
}

int64_t device_allocation_bytes(const DeviceProfile& profile, int64_t requested_bytes) {
  check_request(requested_bytes);
  if (profile.kind == DeviceKind::cpu || requested_bytes == 0) return requested_bytes;
  const int64_t block = cuda_block_bytes(profile.allocator, requested_bytes);
  if (block <= kSmallSize || profile.allocator.expandable_segments) return block;
  const int64_t segment = cuda_segment_bytes(profile.allocator, block);
  return segment - block > kSmallSize ? block : segment;
}

int64_t device_segment_bytes(const DeviceProfile& profile, int64_t requested_bytes) {
  check_request(requested_bytes);
  if (profile.kind == DeviceKind::cpu || requested_bytes == 0) return requested_bytes;
  return cuda_segment_bytes(profile.allocator, cuda_block_bytes(profile.allocator, requested_bytes));
}

}  // namespace bfhpo::memory
