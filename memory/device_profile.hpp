// DeviceProfile: what the analytical memory estimator needs to know about a
// device to turn tensor bytes into device bytes.
//   CPU:  exact -- a tensor costs its bytes (what the CPU meter counts).
//   CUDA: PyTorch's caching allocator (defaults, no PYTORCH_CUDA_ALLOC_CONF):
//     - every request is rounded up to a multiple of 512 bytes (min 512);
//     - rounded requests up to 1 MiB come from the small pool, whose
//       segments are 2 MiB cudaMallocs; a block is always split to fit;
//     - larger ones come from the large pool: a request below 10 MiB gets a
//       20 MiB segment, one of 10 MiB or more a segment rounded up to 2 MiB;
//       a block is split only when more than 1 MiB would remain, so a request
//       filling its segment to within 1 MiB holds the whole segment;
//     - the CUDA context (driver, kernels, cuBLAS handles) holds memory the
//       allocator never sees; `context_bytes` stands for it.
//   Allocated bytes below are those of a request served from a fresh segment;
//   reuse of cached blocks can only be judged by the allocator itself.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace bfhpo::memory {

enum class DeviceKind { cpu, cuda };

// Typical CUDA context of a PyTorch process on CUDA >= 11.7 with lazy module
// loading (a few hundred MiB, depending on GPU and driver); conservative.
inline constexpr int64_t kCudaContextBytes = int64_t{512} << 20;

struct DeviceProfile {
  DeviceKind kind = DeviceKind::cpu;
  int64_t total_bytes = 0;    // device memory; CPU: physical RAM
  int64_t context_bytes = 0;  // held outside the allocator (CUDA context)

  // What tensors can use at most.
  int64_t usable_bytes() const { return total_bytes - context_bytes; }
};

DeviceProfile cpu_device_profile(int64_t total_bytes);
DeviceProfile cuda_device_profile(int64_t total_bytes, int64_t context_bytes = kCudaContextBytes);
// The profile of a present device, its total memory queried (device_total_bytes).
DeviceProfile device_profile(const c10::Device& device);

// Bytes the device's allocated-memory count grows by when a tensor of
// `requested_bytes` (>= 0, else std::invalid_argument) is allocated:
// CPU: requested_bytes; CUDA: the block size described above (0 for 0).
int64_t device_allocation_bytes(const DeviceProfile& profile, int64_t requested_bytes);

// Bytes a request reserves from the device when nothing cached fits it:
// CPU: requested_bytes; CUDA: the segment size described above (0 for 0).
int64_t device_segment_bytes(const DeviceProfile& profile, int64_t requested_bytes);

}  // namespace bfhpo::memory
