#include "memory/cpu_memory_tracking.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstring>
#include <iomanip>
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

// A live allocation: the wrapped allocator's DataPtr (which frees the memory
// when destroyed) and the bytes counted for it.
struct LiveAllocation {
  c10::DataPtr wrapped;
  int64_t bytes = 0;
};

// Keyed by data pointer, so the DataPtr handed out keeps context == data: the
// raw_allocate / raw_deallocate interface (used by oneDNN) and 2.x's
// is_simple_data_ptr keep working. Never destroyed (see g_current_bytes).
struct LiveAllocations {
  std::mutex mutex;
  std::unordered_map<void*, LiveAllocation> by_data;
};

LiveAllocations& live_allocations() {
  static auto* live = new LiveAllocations;
  return *live;
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
    auto& allocations = live_allocations();
    std::lock_guard<std::mutex> lock(allocations.mutex);
    auto it = allocations.by_data.find(data);
    TORCH_INTERNAL_ASSERT(it != allocations.by_data.end(),
                          "bfhpo CPU tracking allocator: freeing a pointer it did not allocate");
    live = std::move(it->second);
    allocations.by_data.erase(it);
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
      throw_over_budget(bytes, in_use - bytes, budget);
    }
    try {
      c10::DataPtr wrapped = wrapped_->allocate(n);
      void* data = wrapped.get();
      const c10::Device device = wrapped.device();
      if (data == nullptr) {
        g_current_bytes.fetch_sub(bytes);
        return c10::DataPtr(nullptr, nullptr, &free_tracked, device);
      }
      {
        auto& allocations = live_allocations();
        std::lock_guard<std::mutex> lock(allocations.mutex);
        allocations.by_data.emplace(data, LiveAllocation{std::move(wrapped), bytes});
      }
      raise_peak(in_use);
      return c10::DataPtr(data, data, &free_tracked, device);
    } catch (...) {
      g_current_bytes.fetch_sub(bytes);
      throw;
    }
  }

 private:
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
