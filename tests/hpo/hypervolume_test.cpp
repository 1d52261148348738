#include "hpo/tpe/hypervolume.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace bfhpo::hpo::tpe;

namespace {

// Integer points: the hypervolume is the number of unit cells [c, c + 1]
// (c integer, c < reference) some point's box holds, i.e. with p <= c.
double cell_count(const LossPoints& points, const std::vector<double>& reference) {
  const std::size_t d = reference.size();
  std::vector<int> c(d, 0);
  double count = 0;
  while (true) {
    count += std::any_of(points.begin(), points.end(), [&](const std::vector<double>& p) {
      for (std::size_t i = 0; i < d; ++i)
        if (p[i] > c[i]) return false;
      return true;
    });
    std::size_t i = 0;
    while (i < d && ++c[i] >= static_cast<int>(reference[i])) c[i++] = 0;
    if (i == d) return count;
  }
}

// The union's measure by inclusion-exclusion over every subset of the points.
double inclusion_exclusion(const LossPoints& points, const std::vector<double>& reference) {
  double volume = 0;
  for (unsigned subset = 1; subset < (1u << points.size()); ++subset) {
    std::vector<double> corner(reference.size(), -INFINITY);
    int size = 0;
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (!(subset >> k & 1u)) continue;
      ++size;
      for (std::size_t i = 0; i < corner.size(); ++i) corner[i] = std::max(corner[i], points[k][i]);
    }
    double box = 1;
    for (std::size_t i = 0; i < corner.size(); ++i) box *= std::max(0.0, reference[i] - corner[i]);
    volume += size % 2 ? box : -box;
  }
  return volume;
}

LossPoints integer_points(std::mt19937_64& rng, int n, int d, int high) {
  std::uniform_int_distribution<int> coordinate(0, high);
  LossPoints points(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(d)));
  for (auto& p : points)
    for (auto& v : p) v = coordinate(rng);
  return points;
}

// Points near the front x1^2 + ... + xd^2 = 1 (so few dominate each other), some pushed back.
LossPoints front_points(std::mt19937_64& rng, int n, int d) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> back(0.0, 0.3);
  LossPoints points;
  for (int k = 0; k < n; ++k) {
    std::vector<double> p(static_cast<std::size_t>(d));
    for (auto& v : p) v = std::abs(normal(rng)) + 1e-3;
    const double norm = std::sqrt(std::inner_product(p.begin(), p.end(), p.begin(), 0.0));
    const double scale = 1.0 + (k % 3 == 0 ? back(rng) : 0.0);
    for (auto& v : p) v = v / norm * scale;
    points.push_back(p);
  }
  return points;
}

LossPoints without(const LossPoints& points, std::size_t k) {
  LossPoints rest = points;
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(k));
  return rest;
}

}  // namespace

TEST_CASE("hypervolume counts the cells of integer points in 1 to 5 objectives", "[hypervolume]") {
  std::mt19937_64 rng(1);
  for (int d = 1; d <= 5; ++d) {
    const int high = d <= 3 ? 7 : 4;
    const std::vector<double> reference(static_cast<std::size_t>(d), high);  // points at the reference add nothing
    for (int round = 0; round < 60; ++round) {
      const int n = 1 + round % 14;
      const LossPoints points = integer_points(rng, n, d, high);  // ties, duplicates and dominated points
      INFO("d " << d << " n " << n << " round " << round);
      CHECK(hypervolume(points, reference) == Approx(cell_count(points, reference)).margin(1e-9));
    }
  }
}

TEST_CASE("hypervolume agrees with inclusion-exclusion on real points", "[hypervolume]") {
  std::mt19937_64 rng(2);
  for (int d = 2; d <= 5; ++d) {
    for (int round = 0; round < 30; ++round) {
      const int n = 2 + round % 9;
      const LossPoints points = front_points(rng, n, d);
      const std::vector<double> reference(static_cast<std::size_t>(d), 1.2);  // some points lie beyond it
      INFO("d " << d << " n " << n);
      CHECK(hypervolume(points, reference) == Approx(inclusion_exclusion(points, reference)).epsilon(1e-10));
    }
  }
}

TEST_CASE("hypervolume does not depend on the order of points or objectives and scales with them",
          "[hypervolume]") {
  std::mt19937_64 rng(3);
  for (int d = 2; d <= 4; ++d) {
    const LossPoints points = front_points(rng, d == 4 ? 40 : 300, d);
    const std::vector<double> reference(static_cast<std::size_t>(d), 1.5);
    const double volume = hypervolume(points, reference);
    CHECK(volume > 0);

    LossPoints shuffled = points;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (auto& p : shuffled) std::rotate(p.begin(), p.begin() + 1, p.end());
    CHECK(hypervolume(shuffled, reference) == Approx(volume).epsilon(1e-12));

    LossPoints scaled = points;
    std::vector<double> scaled_reference = reference;
    for (auto& p : scaled) p[0] = 3.0 * p[0] - 2.0;
    scaled_reference[0] = 3.0 * reference[0] - 2.0;
    CHECK(hypervolume(scaled, scaled_reference) == Approx(3.0 * volume).epsilon(1e-12));
  }
}

TEST_CASE("each point's contribution is what the set loses without it", "[hypervolume]") {
  std::mt19937_64 rng(4);
  for (int d = 1; d <= 4; ++d) {
    const int high = d <= 3 ? 6 : 4;
    const std::vector<double> reference(static_cast<std::size_t>(d), high);
    for (int round = 0; round < 30; ++round) {
      const LossPoints points = integer_points(rng, 1 + round % 10, d, high);
      const std::vector<double> contributions = hypervolume_contributions(points, reference);
      REQUIRE(contributions.size() == points.size());
      const double all = cell_count(points, reference);
      for (std::size_t k = 0; k < points.size(); ++k)
        CHECK(contributions[k] == Approx(all - cell_count(without(points, k), reference)).margin(1e-9));
    }
  }
}

TEST_CASE("the greedy subset adds the largest gain at each step, ties to the lowest index", "[hypervolume]") {
  std::mt19937_64 rng(5);
  for (int d = 2; d <= 4; ++d) {
    const int high = d <= 3 ? 6 : 4;
    const std::vector<double> reference(static_cast<std::size_t>(d), high);
    for (int round = 0; round < 30; ++round) {
      const LossPoints points = integer_points(rng, 1 + round % 9, d, high);
      for (int k = 0; k <= static_cast<int>(points.size()); ++k) {
        // Plain greedy on counted cells.
        std::vector<int> expected;
        LossPoints chosen;
        std::vector<bool> taken(points.size(), false);
        for (int step = 0; step < k; ++step) {
          const double before = cell_count(chosen, reference);
          int best = -1;
          double best_gain = -1;
          for (std::size_t i = 0; i < points.size(); ++i) {
            if (taken[i]) continue;
            LossPoints with = chosen;
            with.push_back(points[i]);
            const double gain = cell_count(with, reference) - before;
            if (gain > best_gain) best = static_cast<int>(i), best_gain = gain;
          }
          expected.push_back(best);
          taken[static_cast<std::size_t>(best)] = true;
          chosen.push_back(points[static_cast<std::size_t>(best)]);
        }
        INFO("d " << d << " n " << points.size() << " k " << k);
        CHECK(greedy_hypervolume_subset(points, k, reference) == expected);
      }
    }
  }
}

TEST_CASE("the greedy subset holds at least 1 - 1/e of the best subset's hypervolume", "[hypervolume]") {
  std::mt19937_64 rng(6);
  const std::vector<double> reference{1.2, 1.2, 1.2};
  for (int round = 0; round < 20; ++round) {
    const LossPoints points = front_points(rng, 10, 3);
    for (int k = 1; k <= 4; ++k) {
      double best = 0;
      std::vector<bool> pick(points.size(), false);
      std::fill(pick.end() - k, pick.end(), true);
      do {
        LossPoints subset;
        for (std::size_t i = 0; i < points.size(); ++i)
          if (pick[i]) subset.push_back(points[i]);
        best = std::max(best, hypervolume(subset, reference));
      } while (std::next_permutation(pick.begin(), pick.end()));
      LossPoints greedy;
      for (int i : greedy_hypervolume_subset(points, k, reference)) greedy.push_back(points[static_cast<std::size_t>(i)]);
      CHECK(hypervolume(greedy, reference) >= (1.0 - 1.0 / M_E) * best);
    }
  }
}
