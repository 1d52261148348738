#include "inference/grid_row_kernel.hpp"

#include "common/float_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#pragma GCC diagnostic ignored "-Wpsabi"  // float_lanes.hpp says why

namespace bfhpo::inference {
namespace {

// A row of at most this many vectors lives on the stack (kAbilityGridPoints' 121 points: 16).
constexpr int64_t kMostVectors = 64;

// exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, so that n ln 2 is exact in
// float32), exp(r) on |r| <= ln 2 / 2 by Cephes' minimax polynomial for expf; x below -87 as -87.
inline FloatLanes exp_nonpositive(const FloatLanes& value) {
  const FloatLanes lowest = broadcast_lanes(-87.0f);
  const FloatLanes x = value < lowest ? lowest : value;
  const float kRoundToInteger = 12582912.0f;  // 1.5 x 2^23: adding and subtracting it rounds to the nearest
  const FloatLanes n = (x * 1.44269504088896341f + kRoundToInteger) - kRoundToInteger;
  const FloatLanes r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  FloatLanes p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const IntLanes exponent_bits = (__builtin_convertvector(n, IntLanes) + 127) << 23;  // 2^n, n in [-126, 0]
  return (p * r * r + r + 1.0f) * lanes_of_bits(exponent_bits);
}

}  // namespace

float exp_of_nonpositive(float x) { return exp_nonpositive(broadcast_lanes(x))[0]; }

__attribute__((target_clones("avx2", "default"))) float grid_row_posterior(const float* log_p, const int64_t* rows,
                                                                            int64_t n, const float* log_weight,
                                                                            int64_t grid_points, float* posterior) {
  const int64_t vectors = (grid_points + kFloatLanes - 1) / kFloatLanes;
  if (vectors > kMostVectors) throw std::logic_error("grid_row_posterior: more grid points than a row holds");
  // The cells' rows added a block of vectors at a time, the block's sums held in registers.
  constexpr int64_t kBlock = 4;
  FloatLanes row[kMostVectors];
  for (int64_t start = 0; start < vectors; start += kBlock) {
    const int64_t count = std::min(kBlock, vectors - start);
    FloatLanes block[kBlock];
    for (int64_t b = 0; b < kBlock; ++b) block[b] = b < count ? load_lanes(log_weight + (start + b) * kFloatLanes) : FloatLanes{};
    for (int64_t i = 0; i < n; ++i) {
      const float* cell = log_p + rows[i] + start * kFloatLanes;
      for (int64_t b = 0; b < kBlock; ++b)
        if (b < count) block[b] += load_lanes(cell + b * kFloatLanes);
    }
    for (int64_t b = 0; b < count; ++b) row[start + b] = block[b];
  }
  // The last vector's lanes beyond the grid hold whatever the padding held: out of the max and the sum.
  IntLanes in_grid;
  for (int64_t l = 0; l < kFloatLanes; ++l) in_grid[l] = (vectors - 1) * kFloatLanes + l < grid_points ? -1 : 0;
  FloatLanes most_lanes = row[0];
  for (int64_t v = 1; v < vectors - 1; ++v) most_lanes = row[v] > most_lanes ? row[v] : most_lanes;
  most_lanes = (in_grid & (row[vectors - 1] > most_lanes)) ? row[vectors - 1] : most_lanes;
  float most = most_lanes[0];
  for (int64_t l = 1; l < kFloatLanes; ++l) most = most_lanes[l] > most ? most_lanes[l] : most;
  FloatLanes sum_lanes = FloatLanes{};
  for (int64_t v = 0; v < vectors; ++v) {
    row[v] = exp_nonpositive(row[v] - most);
    if (v == vectors - 1) row[v] = in_grid ? row[v] : FloatLanes{};
    sum_lanes += row[v];
  }
  const float sum = sum_of_lanes(sum_lanes);
  const float inverse = 1.0f / sum;
  for (int64_t v = 0; v < vectors; ++v) row[v] *= inverse;
  std::memcpy(posterior, row, static_cast<size_t>(grid_points) * sizeof(float));
  return most + std::log(sum);
}

}  // namespace bfhpo::inference
