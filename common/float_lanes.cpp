#include "common/float_lanes.hpp"

#pragma GCC diagnostic ignored "-Wpsabi"  // float_lanes.hpp says why

namespace bfhpo {

__attribute__((target_clones("avx2", "default"))) float dot_in_lanes(const float* a, const float* b, int64_t lanes) {
  FloatLanes sum{};
  for (int64_t v = 0; v < lanes; ++v) sum += load_lanes(a + v * kFloatLanes) * load_lanes(b + v * kFloatLanes);
  return sum_of_lanes(sum);
}

__attribute__((target_clones("avx2", "default"))) int64_t count_at_most(const float* values, int64_t n, float limit) {
  const FloatLanes limit_lanes = broadcast_lanes(limit);
  IntLanes counted{};
  const int64_t whole = n - n % kFloatLanes;
  for (int64_t i = 0; i < whole; i += kFloatLanes) counted -= load_lanes(values + i) <= limit_lanes;  // true is -1
  int64_t count = 0;
  for (int64_t l = 0; l < kFloatLanes; ++l) count += counted[l];
  for (int64_t i = whole; i < n; ++i) count += values[i] <= limit ? 1 : 0;
  return count;
}

}  // namespace bfhpo
