// DeviceProfile: what the analytical memory estimator needs to know about a
// device to turn tensor bytes into device bytes.
//   CPU:  exact -- a tensor costs its bytes (what the CPU meter counts).
//   CUDA: PyTorch's caching allocator, default settings:
//     - every request is rounded up to a multiple of 512 bytes (min 512);
//     - rounded requests up to 1 MiB come from the small pool, whose
//       segments are 2 MiB cudaMallocs; a block is always split to fit;
//     - larger ones come from the large pool: a request below 10 MiB gets a
//       20 MiB segment, one of 10 MiB or more a segment rounded up to 2 MiB;
//       a block is split only when more than 1 MiB would remain, so a request
//       filling its segment to within 1 MiB holds the whole segment;
//     - PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF change this
//       (cuda_allocator_settings.hpp): roundup_power2_divisions rounds large
//       requests up to power-of-two divisions, expandable_segments always
//       splits (a request costs its rounded size), cudaMallocAsync is not
//       modelled and leaves a warning;
//     - the cuBLAS workspaces (cublas_workspace.hpp) are allocator memory
//       that lives from the first matmul to the end of the process;
//     - the CUDA context (driver, kernels, cuBLAS handles) holds memory the
//       allocator never sees; `context_bytes` stands for it.
//   Nothing here involves cuDNN: the networks are Linear layers, bmm,
//   softmax, LayerNorm, dropout and elementwise ops (LibTorch's C++
//   MultiheadAttention is bmm + softmax), none of which calls cuDNN.
//   Allocated bytes below are those of a request served from a fresh segment;
//   reuse of cached blocks can only be judged by the allocator itself.
#pragma once

#include "memory/cuda_allocator_settings.hpp"

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bfhpo::memory {

enum class DeviceKind { cpu, cuda };

// The CUDA context of a PyTorch process on CUDA >= 11.7 with lazy module
// loading: a few hundred MiB depending on GPU and driver. Not yet measured on
// CUDA 12/13 (scripts/gpu-check measures it as the device's used bytes beyond
// the allocator's reserved ones); conservative until calibrated.
inline constexpr int64_t kCudaContextBytes = int64_t{512} << 20;

struct DeviceProfile {
  DeviceKind kind = DeviceKind::cpu;
  int64_t total_bytes = 0;      // device memory; CPU: physical RAM
  int64_t context_bytes = 0;    // held outside the allocator (CUDA context)
  int64_t workspace_bytes = 0;  // CUDA: cuBLAS workspaces a training step holds
  CudaAllocatorSettings allocator;  // CUDA: the caching allocator's settings
  // Why the estimate for this device may be unreliable, one sentence each.
  std::vector<std::string> warnings;

  // What tensors can use at most: the device less the context, and no more
  // than per_process_memory_fraction of it when that is set.
  int64_t usable_bytes() const;
};

DeviceProfile cpu_device_profile(int64_t total_bytes);
DeviceProfile cuda_device_profile(int64_t total_bytes, int64_t context_bytes = kCudaContextBytes,
                                  CudaAllocatorSettings allocator = {}, int64_t workspace_bytes = 0);
// The profile of a present device, its total memory queried (device_total_bytes).
// CUDA: the allocator settings and cuBLAS workspaces from the environment and
// the GPU's compute capability; their warnings are the profile's.
DeviceProfile device_profile(const c10::Device& device);

// Bytes the device's allocated-memory count grows by when a tensor of
// `requested_bytes` (>= 0, else std::invalid_argument) is allocated:
// CPU: requested_bytes; CUDA: the block size described above (0 for 0).
int64_t device_allocation_bytes(const DeviceProfile& profile, int64_t requested_bytes);

// Bytes a request reserves from the device when nothing cached fits it:
// CPU: requested_bytes; CUDA: the segment size described above (0 for 0).
int64_t device_segment_bytes(const DeviceProfile& profile, int64_t requested_bytes);

}  // namespace bfhpo::memory
