// Eight float32 lanes in GCC's vector extension, for loops the compiler
// would not vectorize by itself (reductions, whose order it must keep): one
// AVX2 register where a function is compiled for AVX2, two SSE2 ones on
// every other x86-64 CPU, the same arithmetic lane by lane in each, so a
// result is the same bits whichever runs.
#pragma once

#include <cstdint>
#include <cstring>

// The helpers pass 32-byte vectors by value, which GCC warns changes the ABI where AVX is off; they are
// inline, so no call crosses an ABI.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace bfhpo {

typedef float FloatLanes __attribute__((vector_size(32)));
typedef int32_t IntLanes __attribute__((vector_size(32)));
inline constexpr int64_t kFloatLanes = 8;

inline FloatLanes load_lanes(const float* from) {
  FloatLanes lanes;
  std::memcpy(&lanes, from, sizeof lanes);
  return lanes;
}

inline FloatLanes broadcast_lanes(float value) { return FloatLanes{} + value; }

inline FloatLanes lanes_of_bits(const IntLanes& bits) {
  FloatLanes lanes;
  std::memcpy(&lanes, &bits, sizeof lanes);
  return lanes;
}

// The lanes' sum, in one fixed order: ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)).
inline float sum_of_lanes(const FloatLanes& lanes) {
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// How many of values[0..n) are at most `limit`, eight at a time (the AVX2 clone where the CPU has it).
int64_t count_at_most(const float* values, int64_t n, float limit);

// The dot product of a and b, `lanes` x 8 floats each, summed lane by lane and then by sum_of_lanes: the
// AVX2 clone where the CPU has it (an SSE2 build spills the 32-byte sum to memory every step).
float dot_in_lanes(const float* a, const float* b, int64_t lanes);

}  // namespace bfhpo

#pragma GCC diagnostic pop
