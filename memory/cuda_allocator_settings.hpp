// CudaAllocatorSettings: the settings of PyTorch's CUDA caching allocator that
// change how many bytes a tensor costs, read from the environment variable
// PyTorch reads them from (PYTORCH_ALLOC_CONF, or PYTORCH_CUDA_ALLOC_CONF;
// libtorch 2.x reads the first set of the two, 1.13 only the second).
//
// The text is "key:value,key:value" with list values in brackets; keys and
// meanings are PyTorch's (c10/core/AllocatorConfig.cpp, c10/cuda/
// CUDAAllocatorConfig.h). What the estimate does with each:
//   roundup_power2_divisions  modelled: requests above 512 * divisions bytes
//                             are rounded up to the next of `divisions`
//                             steps between two powers of two. One number
//                             (all sizes) or a list "[1:2,64:4,>:8]" of
//                             interval (MB, a power of two) : divisions.
//   expandable_segments       modelled: blocks are always split (a request
//                             costs its rounded size), segments grow by pages
//                             of 2 MiB (small pool) or 20 MiB (large pool).
//   max_split_size_mb         no effect on what a request costs from a fresh
//   max_non_split_rounding_mb segment; they change how cached blocks are
//   garbage_collection_threshold  reused and freed (fragmentation), which the
//                             estimate never models: read, validated, kept.
//   per_process_memory_fraction  modelled by the caller: caps the usable bytes.
//   backend:cudaMallocAsync   NOT modelled: CUDA's own pool rounds and caches
//                             differently; `warnings` says the estimate is
//                             unreliable.
//   release_lock_on_cudamalloc, pinned_*, graph_capture_record_stream_reuse,
//   throw_on_cudamalloc_oom   host-side or no effect on sizes: ignored.
// A key PyTorch does not know makes PyTorch itself stop at the first CUDA
// allocation; here it is a warning (the estimate runs before CUDA starts).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::memory {

// Intervals of roundup_power2_divisions: [1 MiB, 2 MiB), [2, 4), ... up to
// 64 GiB; requests below 1 MiB use the first, above 32 GiB the last.
inline constexpr int kRoundupIntervals = 16;

struct CudaAllocatorSettings {
  std::string source;  // "PYTORCH_ALLOC_CONF=..." as read; empty: defaults
  std::array<int64_t, kRoundupIntervals> roundup_power2_divisions{};  // 0: plain 512-byte rounding
  bool expandable_segments = false;
  std::optional<int64_t> max_split_size_bytes;
  std::optional<int64_t> max_non_split_rounding_bytes;
  double garbage_collection_threshold = 0;
  std::optional<double> per_process_memory_fraction;
  bool async_backend = false;  // backend:cudaMallocAsync
  // Settings under which the estimate is unreliable, one sentence each.
  std::vector<std::string> warnings;

  // The divisions that apply to a request of `bytes` (> 0).
  int64_t divisions_for(int64_t bytes) const;
};

// Parses an allocator configuration text. `origin` names where it came from
// (e.g. "PYTORCH_ALLOC_CONF") in error messages. A malformed value (not a
// number, a division that is not a power of two, a max_split_size_mb below
// 20, a threshold outside (0, 1), a missing ':') is bfhpo::UserError naming
// the variable, the key and the fix, as PyTorch would refuse it too.
CudaAllocatorSettings parse_cuda_allocator_settings(const std::string& text, const std::string& origin);

// The settings the environment sets: PYTORCH_ALLOC_CONF when set, else
// PYTORCH_CUDA_ALLOC_CONF, else defaults. When both are set and differ, a
// warning says so (libtorch versions disagree on which one wins).
CudaAllocatorSettings cuda_allocator_settings_from_environment();

}  // namespace bfhpo::memory
