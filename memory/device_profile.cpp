#include "memory/device_profile.hpp"

#include "memory/meter.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

int64_t cuda_block_bytes(int64_t requested_bytes) {
  return round_up(std::max(requested_bytes, kMinBlockSize), kMinBlockSize);
}

int64_t cuda_segment_bytes(int64_t block_bytes) {
  if (block_bytes <= kSmallSize) return kSmallBuffer;
  if (block_bytes < kMinLargeAlloc) return kLargeBuffer;
  return round_up(block_bytes, kRoundLarge);
}

}  // namespace

DeviceProfile cpu_device_profile(int64_t total_bytes) {
  return {DeviceKind::cpu, total_bytes, 0};
}

DeviceProfile cuda_device_profile(int64_t total_bytes, int64_t context_bytes) {
  return {DeviceKind::cuda, total_bytes, context_bytes};
}

DeviceProfile device_profile(const c10::Device& device) {
  const int64_t total = device_total_bytes(device);
  return device.is_cuda() ? cuda_device_profile(total) : cpu_device_profile(total);
}

int64_t device_allocation_bytes(const DeviceProfile& profile, int64_t requested_bytes) {
  check_request(requested_bytes);
  if (profile.kind == DeviceKind::cpu || requested_bytes == 0) return requested_bytes;
  const int64_t block = cuda_block_bytes(requested_bytes);
  if (block <= kSmallSize) return block;
  const int64_t segment = cuda_segment_bytes(block);
  return segment - block > kSmallSize ? block : segment;
}

int64_t device_segment_bytes(const DeviceProfile& profile, int64_t requested_bytes) {
  check_request(requested_bytes);
  if (profile.kind == DeviceKind::cpu || requested_bytes == 0) return requested_bytes;
  return cuda_segment_bytes(cuda_block_bytes(requested_bytes));
}

}  // namespace bfhpo::memory
