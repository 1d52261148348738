#include <catch2/catch.hpp>

#include "inference/grid_row_kernel.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace bfhpo;

namespace {

// Units in the last place of float32 between a and the float64 b, near b.
double ulps_between(float a, double b) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(b)) - 23);
  return std::abs(static_cast<double>(a) - b) / ulp;
}

}  // namespace

TEST_CASE("exp_of_nonpositive is exp within 2 ulp on [-87, 0], exp(-87) below it", "[grid_row_kernel]") {
  double worst = 0.0;
  for (int i = 0; i <= 870000; ++i) {
    const float x = -static_cast<float>(i) * 1e-4f;
    worst = std::max(worst, ulps_between(inference::exp_of_nonpositive(x), std::exp(static_cast<double>(x))));
  }
  INFO("largest error " << worst << " ulp");
  CHECK(worst <= 2.0);
  CHECK(inference::exp_of_nonpositive(0.0f) == 1.0f);
  CHECK(inference::exp_of_nonpositive(-200.0f) == inference::exp_of_nonpositive(-87.0f));
  CHECK(inference::exp_of_nonpositive(-87.0f) > 0.0f);
}

TEST_CASE("grid_row_posterior: the row's sums, max, exponentials and sum in the stated order, to the bit",
          "[grid_row_kernel]") {
  // 121 grid points (a partial last vector of 8) and 20 answered cells of random log probabilities: the
  // kernel (whichever clone this CPU runs) against the sequence its header states, done one float at a time.
  constexpr int64_t kGrid = 121, kPadded = 128, kCells = 20;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> log_p(-12.0f, 0.0f);
  std::vector<float> table(kCells * 2 * kPadded), weight(kPadded);
  for (auto& value : table) value = log_p(random);
  for (auto& value : weight) value = log_p(random);
  std::vector<int64_t> rows;
  for (int64_t c = 0; c < kCells; ++c) rows.push_back((2 * c + c % 2) * kPadded);

  std::vector<float> posterior(kGrid);
  const float log_integral =
      inference::grid_row_posterior(table.data(), rows.data(), kCells, weight.data(), kGrid, posterior.data());

  std::vector<float> joint(weight.begin(), weight.begin() + kGrid);
  for (int64_t row : rows)
    for (int64_t g = 0; g < kGrid; ++g) joint[static_cast<size_t>(g)] += table[static_cast<size_t>(row + g)];
  float most = joint[0];
  for (float value : joint) most = value > most ? value : most;
  float lanes[8] = {};
  std::vector<float> expected(kGrid);
  for (int64_t g = 0; g < kGrid; ++g) {
    expected[static_cast<size_t>(g)] = inference::exp_of_nonpositive(joint[static_cast<size_t>(g)] - most);
    lanes[g % 8] += expected[static_cast<size_t>(g)];
  }
  const float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  const float inverse = 1.0f / sum;
  for (auto& value : expected) value *= inverse;
  CHECK(std::memcmp(posterior.data(), expected.data(), sizeof(float) * kGrid) == 0);
  CHECK(log_integral == most + std::log(sum));

  // And the posterior is exp(joint) normalized, in float64, to float32's rounding of 20 added terms.
  double total = 0.0;
  for (float value : joint) total += std::exp(static_cast<double>(value));
  for (int64_t g = 0; g < kGrid; ++g)
    CHECK(posterior[static_cast<size_t>(g)] ==
          Approx(std::exp(static_cast<double>(joint[static_cast<size_t>(g)])) / total).epsilon(1e-5).margin(1e-12));
  CHECK(log_integral == Approx(std::log(total)).epsilon(1e-6));
}
