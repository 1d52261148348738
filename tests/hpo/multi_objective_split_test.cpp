#include "hpo/pareto_front.hpp"
#include "hpo/tpe/multi_objective_split.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace bfhpo::hpo;
using namespace bfhpo::hpo::tpe;

TEST_CASE("the below trials are whole non-domination ranks, the cut rank by greedy hypervolume", "[tpe]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> coordinate(0, 9);
  for (int round = 0; round < 200; ++round) {
    const int d = 2 + round % 2, n = 5 + round % 20;
    LossPoints losses(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(d)));
    for (auto& p : losses)
      for (auto& v : p) v = coordinate(rng);
    const std::vector<int> ranks = non_domination_ranks(losses);
    for (int n_below = 0; n_below <= n; ++n_below) {
      const std::vector<int> below = multi_objective_below(losses, n_below);
      REQUIRE(static_cast<int>(below.size()) == n_below);
      REQUIRE(std::is_sorted(below.begin(), below.end()));
      if (n_below == 0) continue;
      // No trial left out ranks better than one taken, and every trial of a better rank is taken.
      int worst_taken = 0;
      for (int i : below) worst_taken = std::max(worst_taken, ranks[static_cast<std::size_t>(i)]);
      for (int i = 0; i < n; ++i)
        if (ranks[static_cast<std::size_t>(i)] < worst_taken)
          CHECK(std::binary_search(below.begin(), below.end(), i));
      // The cut rank's share is the greedy subset against that rank's reference point.
      LossPoints cut;
      std::vector<int> cut_index;
      int taken_before = 0;
      for (int i = 0; i < n; ++i) {
        if (ranks[static_cast<std::size_t>(i)] == worst_taken) {
          cut.push_back(losses[static_cast<std::size_t>(i)]);
          cut_index.push_back(i);
        }
        taken_before += ranks[static_cast<std::size_t>(i)] < worst_taken;
      }
      std::vector<int> expected;
      for (int j : greedy_hypervolume_subset(cut, n_below - taken_before, tpe_reference_point(cut)))
        expected.push_back(cut_index[static_cast<std::size_t>(j)]);
      std::sort(expected.begin(), expected.end());
      std::vector<int> got;
      for (int i : below)
        if (ranks[static_cast<std::size_t>(i)] == worst_taken) got.push_back(i);
      CHECK(got == expected);
    }
  }
}

TEST_CASE("the reference point lies a tenth beyond the worst value, whatever its sign", "[tpe]") {
  const std::vector<double> reference = tpe_reference_point({{1.0, -2.0, 0.0}, {3.0, -4.0, 0.0}});
  REQUIRE(reference.size() == 3);
  CHECK(reference[0] == Approx(3.3));
  CHECK(reference[1] == Approx(-1.8));
  CHECK(reference[2] == 1e-12);
}

TEST_CASE("hypervolume contribution weights favour the trials that hold the front", "[tpe]") {
  // (0, 3) and (3, 0) hold the ends of the front, (1, 1) its middle, (2, 2) is dominated.
  const Eigen::ArrayXd w = hypervolume_contribution_weights({{0, 3}, {1, 1}, {3, 0}, {2, 2}});
  REQUIRE(w.size() == 4);
  CHECK(w.mean() == Approx(1.0));
  CHECK(w[3] < 1e-9 * w.maxCoeff());
  CHECK(w[1] > w[3]);
  CHECK(hypervolume_contribution_weights({{1, 2}}).isApproxToConstant(1.0));
}
