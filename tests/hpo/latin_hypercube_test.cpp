#include "hpo/latin_hypercube.hpp"
#include "hpo/sampler.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

SearchSpace mixed_space() {
  return SearchSpace::from_json(json::parse(R"({
    "x":     {"type": "float", "low": -5, "high": 5},
    "lr":    {"type": "float", "low": 1e-5, "high": 1e-1, "log": true},
    "drop":  {"type": "float", "low": 0, "high": 0.9, "step": 0.1},
    "depth": {"type": "int", "low": 1, "high": 10},
    "kind":  {"type": "categorical", "choices": ["a", "b", "c", "d", "e"]},
    "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}}})"), "test");
}

// The stratum of a value: which tenth of the parameter's prior it lies in.
int tenth(const std::string& name, double v) {
  if (name == "x") return static_cast<int>(std::floor((v + 5) / 10 * 10));
  if (name == "lr") return static_cast<int>(std::floor((std::log10(v) + 5) / 4 * 10));
  if (name == "drop") return static_cast<int>(std::lround(v * 10));
  return static_cast<int>(v) - 1;  // depth 1..10
}

std::vector<Params> design(const SearchSpace& space, std::uint64_t seed, int first_trial, int n) {
  std::vector<Params> points;
  for (int t = first_trial; t < first_trial + n; ++t) {
    std::mt19937_64 rng(trial_rng_seed(seed, t));
    points.push_back(latin_hypercube_point(space, 10, seed, t, rng));
  }
  return points;
}

}  // namespace

TEST_CASE("each round of 10 trials puts one point in each tenth of every parameter, two per choice of five") {
  const SearchSpace space = mixed_space();
  for (std::uint64_t seed : {0u, 1u, 77u}) {
    for (int round = 0; round < 3; ++round) {
      const std::vector<Params> points = design(space, seed, 10 * round, 10);
      for (const char* name : {"x", "lr", "drop", "depth"}) {
        std::set<int> strata;
        for (const auto& p : points) strata.insert(tenth(name, p.at(name)));
        CHECK(strata == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
      }
      std::map<double, int> kinds;
      for (const auto& p : points) {
        ++kinds[p.at("kind")];
        CHECK(space.is_valid_assignment(p));  // heads exactly when kind is "b"
      }
      CHECK(kinds == std::map<double, int>{{0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 2}});
    }
  }
}

TEST_CASE("the design depends on the study seed and the trial number only") {
  const SearchSpace space = mixed_space();
  CHECK(design(space, 5, 0, 10) == design(space, 5, 0, 10));
  // A worker that draws trials 3 and 7 draws what a single worker draws for them.
  CHECK(design(space, 5, 3, 1).front() == design(space, 5, 0, 10)[3]);
  std::vector<Params> a = design(space, 5, 0, 10), b = design(space, 6, 0, 10), c = design(space, 5, 10, 10);
  int same_x_stratum_b = 0, same_x_stratum_c = 0;
  for (int t = 0; t < 10; ++t) {
    same_x_stratum_b += tenth("x", a[t].at("x")) == tenth("x", b[t].at("x"));
    same_x_stratum_c += tenth("x", a[t].at("x")) == tenth("x", c[t].at("x"));
  }
  CHECK(same_x_stratum_b < 10);  // another seed, another permutation
  CHECK(same_x_stratum_c < 10);  // another round, another permutation
}
