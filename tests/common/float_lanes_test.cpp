#include <catch2/catch.hpp>

#include "common/float_lanes.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

TEST_CASE("dot_in_lanes: lane by lane, then the lanes in their fixed order; integers exactly", "[float_lanes]") {
  std::mt19937 random(3);
  std::uniform_int_distribution<int> category(0, 6);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const int64_t lanes = 63;  // 504 floats
  std::vector<float> a(lanes * bfhpo::kFloatLanes), b(a.size());

  // Categories of 500 persons (the rest zero): their products' sum, an integer below 2^24, exactly.
  int64_t exact = 0;
  for (size_t i = 0; i < 500; ++i) {
    a[i] = static_cast<float>(category(random));
    b[i] = static_cast<float>(category(random));
    exact += static_cast<int64_t>(a[i]) * static_cast<int64_t>(b[i]);
  }
  CHECK(bfhpo::dot_in_lanes(a.data(), b.data(), lanes) == static_cast<float>(exact));

  // Reals: the stated order, to the bit.
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = real(random);
    b[i] = real(random);
  }
  float lane[8] = {};
  for (size_t i = 0; i < a.size(); ++i) lane[i % 8] += a[i] * b[i];
  const float expected = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  CHECK(bfhpo::dot_in_lanes(a.data(), b.data(), lanes) == expected);
}

TEST_CASE("count_at_most: std::upper_bound's place in sorted values, for any length and limit", "[float_lanes]") {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  for (int64_t n : {1, 7, 8, 9, 121, 128}) {
    std::vector<float> sorted(static_cast<size_t>(n));
    for (auto& v : sorted) v = value(random);
    std::sort(sorted.begin(), sorted.end());
    std::vector<float> limits = {-1.0f, 2.0f, sorted.front(), sorted.back(), sorted[static_cast<size_t>(n / 2)]};
    for (int i = 0; i < 20; ++i) limits.push_back(value(random));
    for (float limit : limits)
      CHECK(bfhpo::count_at_most(sorted.data(), n, limit) ==
            std::upper_bound(sorted.begin(), sorted.end(), limit) - sorted.begin());
  }
}
