#include "memory/cpu_memory_tracking.hpp"

#include "common/heap_policy.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace bfhpo::memory {
namespace {

// Above c10's default CPU allocator (0), below the maximum so a profiler that
// must see every allocation can still wrap this one.
constexpr uint8_t kTrackingPriority = 100;

// Plain atomics: constant-initialised, trivially destructible, so tensors freed
// during static destruction still find them.
std::atomic<int64_t> g_current_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};
std::atomic<int64_t> g_budget_bytes{0};
std::atomic<c10::Allocator*> g_tracking_allocator{nullptr};

// Blocks of at least this size are kept for reuse when freed. Smaller ones
// glibc's heap reuses itself; larger ones it maps fresh from the kernel on
// every allocation (its mmap threshold tops out at 32 MiB), and each page
// of a fresh mapping costs a zero-filling page fault on first touch.
constexpr size_t kMinCachedBytes = size_t{1} << 20;
// A cached block serves a request of at least 1/kMaxSlack of its size.
constexpr size_t kMaxSlack = 2;
// A fresh block at least this large asks the kernel for transparent huge
// pages over its whole 2 MiB pages: a 4 KiB page fault costs 15-40 us on a
// VM, so a step whose batch shapes vary (and so miss the cache) spent as long
// faulting as computing (bench/README.md, training at real shapes). Where THP
// is "never" the advice is ignored; with "always" it is already given.
constexpr size_t kHugePageBytes = size_t{2} << 20;

void advise_huge_pages(void* data, size_t n) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (begin + n) & ~(kHugePageBytes - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

// A live allocation: the wrapped allocator's DataPtr (which frees the memory
// when destroyed), the bytes counted for it and the bytes the block holds
// (more when it came from the cache).
struct LiveAllocation {
  c10::DataPtr wrapped;
  int64_t bytes = 0;
  size_t capacity = 0;
};

// Keyed by data pointer, so the DataPtr handed out keeps context == data: the
// raw_allocate / raw_deallocate interface (used by oneDNN) and 2.x's
// is_simple_data_ptr keep working. Never destroyed (see g_current_bytes).
// `cached`: freed large blocks by capacity. A block is cached only while the
// live bytes plus the cache stay within the most bytes ever live at once
// (`high_water`), so the process never holds more than its largest working
// set.
struct Allocations {
  std::mutex mutex;
  std::unordered_map<void*, LiveAllocation> by_data;
  std::multimap<size_t, c10::DataPtr> cached;
  size_t cached_bytes = 0;
  int64_t high_water = 0;
};

Allocations& allocations() {
  static auto* all = new Allocations;
  return *all;
}

// The smallest cached block that serves `n` bytes, taken out of the cache;
// an empty DataPtr when none does.
c10::DataPtr take_cached(Allocations& all, size_t n, size_t& capacity) {
  auto it = all.cached.lower_bound(n);
  if (it == all.cached.end() || it->first / kMaxSlack > n) return {};
  capacity = it->first;
  c10::DataPtr block = std::move(it->second);
  all.cached.erase(it);
  all.cached_bytes -= capacity;
  return block;
}

void raise_peak(int64_t bytes) {
  int64_t peak = g_peak_bytes.load();
  while (bytes > peak && !g_peak_bytes.compare_exchange_weak(peak, bytes)) {
  }
}

std::string mib(int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0)
      << " MiB";
  return out.str();
}

void throw_over_budget(int64_t asked, int64_t in_use, int64_t budget) {
  C10_THROW_ERROR(OutOfMemoryError,
                  "CPU out of memory (bfhpo CPU memory budget). Tried to allocate " +
                      std::to_string(asked) + " bytes (" + mib(asked) + "); " +
                      std::to_string(in_use) + " bytes (" + mib(in_use) +
                      ") already allocated; budget " + std::to_string(budget) + " bytes (" +
                      mib(budget) + ").");
}

void free_tracked(void* data) {
  if (data == nullptr) return;
  LiveAllocation live;
  {
    auto& all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto it = all.by_data.find(data);
    TORCH_INTERNAL_ASSERT(it != all.by_data.end(), "bfhpo CPU tracking allocator: freeing a pointer it did not allocate");
    live = std::move(it->second);
    all.by_data.erase(it);
    const int64_t live_after = g_current_bytes.load() - live.bytes;
    if (live.capacity >= kMinCachedBytes &&
        live_after + static_cast<int64_t>(all.cached_bytes + live.capacity) <= all.high_water) {
      all.cached.emplace(live.capacity, std::move(live.wrapped));
      all.cached_bytes += live.capacity;
    }
  }
  live.wrapped.clear();
  g_current_bytes.fetch_sub(live.bytes);
}

// Everything but allocate(). No member is marked `override`: copy_data only
// overrides in libtorch 2.x, and marking the others would make clang warn
// about the inconsistency on 1.13.
class TrackingAllocatorCore : public c10::Allocator {
 public:
  explicit TrackingAllocatorCore(c10::Allocator* wrapped) : wrapped_(wrapped) {}

  c10::DeleterFnPtr raw_deleter() const { return &free_tracked; }

  void copy_data(void* dest, const void* src, std::size_t count) const {
    if (count > 0) std::memcpy(dest, src, count);
  }

 protected:
  c10::DataPtr allocate_tracked(size_t n) const {
    const auto bytes = static_cast<int64_t>(n);
    const int64_t in_use = g_current_bytes.fetch_add(bytes) + bytes;
    const int64_t budget = g_budget_bytes.load();
    if (budget > 0 && in_use > budget) {
      g_current_bytes.fetch_sub(bytes);
      release_cpu_cache();
      throw_over_budget(bytes, in_use - bytes, budget);
    }
    try {
      size_t capacity = n;
      c10::DataPtr wrapped = n >= kMinCachedBytes ? reuse_or_allocate(n, capacity) : wrapped_->allocate(n);
      void* data = wrapped.get();
      const c10::Device device = wrapped.device();
      if (data == nullptr) {
        g_current_bytes.fetch_sub(bytes);
        return c10::DataPtr(nullptr, nullptr, &free_tracked, device);
      }
      {
        auto& all = allocations();
        std::lock_guard<std::mutex> lock(all.mutex);
        all.by_data.emplace(data, LiveAllocation{std::move(wrapped), bytes, capacity});
        all.high_water = std::max(all.high_water, in_use);
      }
      raise_peak(in_use);
      return c10::DataPtr(data, data, &free_tracked, device);
    } catch (...) {
      g_current_bytes.fetch_sub(bytes);
      throw;
    }
  }

 private:
  // A cached block for `n` bytes, else a fresh one; when the system refuses
  // a fresh one, the cache is returned to it and the allocation tried again.
  c10::DataPtr reuse_or_allocate(size_t n, size_t& capacity) const {
    auto& all = allocations();
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      c10::DataPtr block = take_cached(all, n, capacity);
      if (block) return block;
    }
    c10::DataPtr block;
    try {
      block = wrapped_->allocate(n);
    } catch (...) {
      release_cpu_cache();
      block = wrapped_->allocate(n);
    }
    if (n >= 2 * kHugePageBytes) advise_huge_pages(block.get(), n);
    return block;
  }

  c10::Allocator* wrapped_;
};

// c10::Allocator::allocate is `const` up to libtorch 2.2 and non-const from
// 2.3; the adapter matching the libtorch in use is the only one instantiated.
template <class Core, bool kConstAllocate>
class AllocateAdapter;

template <class Core>
class AllocateAdapter<Core, true> : public Core {
 public:
  using Core::Core;
  c10::DataPtr allocate(size_t n) const override { return this->allocate_tracked(n); }
};

template <class Core>
class AllocateAdapter<Core, false> : public Core {
 public:
  using Core::Core;
  c10::DataPtr allocate(size_t n) override { return this->allocate_tracked(n); }
};

constexpr bool kConstAllocate =
    std::is_same<decltype(&c10::Allocator::allocate),
                  c10::DataPtr (c10::Allocator::*)(size_t) const>::value;
using TrackingAllocator = AllocateAdapter<TrackingAllocatorCore, kConstAllocate>;


}  // namespace

void install_cpu_memory_tracking() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The cache hides the large frees that would raise glibc's thresholds.
    keep_freed_heap_for_reuse();
    auto* tracking = new TrackingAllocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(tracking, kTrackingPriority);
    g_tracking_allocator.store(tracking);
  });
  if (c10::GetCPUAllocator() != g_tracking_allocator.load()) {
    throw std::runtime_error(
        "bfhpo: the CPU memory tracking allocator is not c10's CPU allocator; another "
        "allocator was set with a priority above " +
        std::to_string(kTrackingPriority));
  }
}

int64_t cpu_current_bytes() {
  install_cpu_memory_tracking();
  return g_current_bytes.load();
}

int64_t cpu_peak_bytes() {
  install_cpu_memory_tracking();
  return g_peak_bytes.load();
}

void reset_cpu_peak() {
  install_cpu_memory_tracking();
  g_peak_bytes.store(g_current_bytes.load());
}

int64_t cpu_memory_budget() { return g_budget_bytes.load(); }

int64_t cpu_cached_bytes() {
  auto& all = allocations();
  std::lock_guard<std::mutex> lock(all.mutex);
  return static_cast<int64_t>(all.cached_bytes);
}

void release_cpu_cache() noexcept {
  auto& all = allocations();
  std::multimap<size_t, c10::DataPtr> blocks;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    blocks.swap(all.cached);
    all.cached_bytes = 0;
  }
  blocks.clear();  // freed outside the lock
  malloc_trim(0);  // and the heap's free memory given back
}

CpuMemoryBudget::CpuMemoryBudget(int64_t bytes) {
  if (bytes <= 0) {
    throw std::invalid_argument("CpuMemoryBudget: the budget must be positive, got " +
                                std::to_string(bytes) + " bytes");
  }
  install_cpu_memory_tracking();
  previous_bytes_ = g_budget_bytes.exchange(bytes);
}

CpuMemoryBudget::~CpuMemoryBudget() { g_budget_bytes.store(previous_bytes_); }

}  // namespace bfhpo::memory
