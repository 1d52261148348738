// CPU memory tracking and budget: a c10 CPU allocator that wraps the one in
// place and counts every tensor byte, so CPU runs can be metered exactly and
// can behave like a GPU of a chosen size. Under a budget, an allocation that
// would push the tracked bytes above it throws c10::OutOfMemoryError with a
// CUDA-style "out of memory" message -- the same type CUDA's caching allocator
// throws -- so every OOM recovery path can be tested on a CPU-only machine.
//
// Counting starts at installation: tensors allocated before it are freed by
// their own deleter and never counted (the count cannot go negative). Bytes
// are the bytes asked of the allocator (a tensor's storage nbytes), exact,
// without the system allocator's alignment or headers.
//
// Like CUDA's caching allocator, it keeps freed blocks of 1 MiB and more for
// reuse: glibc maps blocks over its mmap threshold (<= 32 MiB) fresh from the
// kernel on every allocation, and touching a fresh page costs a page fault,
// which made a CPU training step up to ~1.7x slower. A cached block serves a
// request of at least half its size. Cached blocks hold no tensor: they count
// neither in the current/peak bytes nor against a budget. A freed block is
// cached only while live bytes plus the cache stay within the most bytes ever
// live at once. Installing it also fixes glibc's mmap threshold (32 MiB) and
// trim threshold (256 MiB), so smaller blocks are reused from its heap rather
// than mapped and faulted in afresh (cpu_memory_tracking.cpp says why).
// release_cpu_cache returns the cache, and glibc's free heap, to the system; it runs in
// safe_empty_cache, before an allocation over the budget throws, and before a
// fresh allocation the system refused is retried.
#pragma once

#include <cstdint>

namespace bfhpo::memory {

// Installs the tracking allocator as c10's CPU allocator (once; later calls do
// nothing; thread-safe). Called by every function below that needs it.
// Throws std::runtime_error when an allocator of higher priority stays in place.
void install_cpu_memory_tracking();

// Tracked bytes now / the most since installation or the last reset_cpu_peak().
int64_t cpu_current_bytes();
int64_t cpu_peak_bytes();
// Sets the peak to the current bytes.
void reset_cpu_peak();

// The budget in force, in bytes; 0 when none.
int64_t cpu_memory_budget();

// Bytes of freed blocks kept for reuse / returns them to the system.
int64_t cpu_cached_bytes();
void release_cpu_cache() noexcept;

// RAII: while alive, tracked CPU bytes may not exceed `bytes` (> 0, else
// std::invalid_argument); the destructor restores the budget that was in force
// before, so scopes nest (the innermost one applies). The budget is process
// wide: scopes must nest, not overlap across threads. Bytes already allocated
// count against it. Concurrent allocations near the limit may fail although
// only one of them would have: a budget is never exceeded, never raced past.
class CpuMemoryBudget {
 public:
  explicit CpuMemoryBudget(int64_t bytes);
  ~CpuMemoryBudget();
  CpuMemoryBudget(const CpuMemoryBudget&) = delete;
  CpuMemoryBudget& operator=(const CpuMemoryBudget&) = delete;

 private:
  int64_t previous_bytes_;
};

}  // namespace bfhpo::memory
