#include "common/heap_policy.hpp"

#include <malloc.h>

namespace bfhpo {
namespace {

constexpr int kHeapMmapThreshold = 32 << 20;
constexpr int kHeapTrimThreshold = 256 << 20;

}  // namespace

void keep_freed_heap_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, kHeapMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kHeapTrimThreshold);
}

}  // namespace bfhpo
