#include "common/float_lanes.hpp"

#pragma GCC diagnostic ignored "-Wpsabi"  // float_lanes.hpp says why

namespace bfhpo {

__attribute__((target_clones("avx2", "default"))) float dot_in_lanes(const float* a, const float* b, int64_t lanes) {
  FloatLanes sum{};
  for (int64_t v = 0; v < lanes; ++v) sum += load_lanes(a + v * kFloatLanes) * load_lanes(b + v * kFloatLanes);
  return sum_of_lanes(sum);
}

}  // namespace bfhpo
