// The inner loop of every ability-grid posterior (GridAbilityPosterior):
// one person's row over the G grid points, from the log probabilities of the
// categories the person answered, in one pass that stays in the L1 cache:
//   log joint_g = log weight_g + sum over answered cells c of log p_c(theta_g),
//   posterior_g = exp(log joint_g - max) / sum_g' exp(log joint_g' - max),
//   log integral = max + log sum_g exp(log joint_g - max).
// In float32, the exponential by Cephes' polynomial for expf (within 2 ulp
// of exp on [-87, 0]; below -87, where exp is under float32's smallest
// normal 1.2e-38, the exponential of -87 instead: a mass of at most 1e-38
// where exp gives a subnormal). The arithmetic is the same sequence on every
// x86-64 CPU: eight lanes at a time (GCC's vector extension), the row's sum
// in eight lanes combined in a fixed order, no fused multiply-add, so the
// AVX2 clone (chosen at load where the CPU has it) gives the same bits as
// the baseline SSE2 one.
#pragma once

#include "common/float_lanes.hpp"

#include <cstdint>

namespace bfhpo::inference {

// exp(x) for x <= 0 as above (the kernel's; for its tests).
float exp_of_nonpositive(float x);

// `rows` [n] the answered cells' offsets into `log_p` (each the start of G
// contiguous log probabilities), `log_weight` [G]; each of those readable up
// to G rounded up to a whole number of lanes (kGridRowPadding; what the
// padding holds is left out): the posterior into `posterior` [G] and the log
// integral returned. G at most 512.
inline constexpr int64_t kGridRowPadding = kFloatLanes;
float grid_row_posterior(const float* log_p, const int64_t* rows, int64_t n, const float* log_weight, int64_t grid_points,
                         float* posterior);

}  // namespace bfhpo::inference
