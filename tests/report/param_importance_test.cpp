#include "report/param_importance.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace bfhpo;

namespace {

// n COMPLETE trials with x, y, z uniform on [0, 1]; the value depends strongly on x, less on y, not on z.
std::vector<hpo::FrozenTrial> trials_of(int n, unsigned seed, double (*transform)(double)) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<hpo::FrozenTrial> trials;
  for (int i = 0; i < n; ++i) {
    hpo::FrozenTrial t;
    t.number = i;
    t.state = hpo::TrialState::Complete;
    const double x = u(rng), y = u(rng), z = u(rng);
    t.params = {{"x", x}, {"y", y}, {"z", z}};
    for (const char* name : {"x", "y", "z"}) t.distributions[name] = hpo::FloatDistribution{0.0, 1.0, false, std::nullopt};
    t.values = {transform(4.0 * (x - 0.5) * (x - 0.5) + 0.6 * y + 0.05 * u(rng))};
    trials.push_back(t);
  }
  return trials;
}

double identity(double v) { return v; }
double monotone(double v) { return std::exp(5.0 * v) - 3.0; }

double importance_of(const std::vector<report::ParamImportance>& all, const std::string& name) {
  for (const auto& p : all)
    if (p.name == name) return p.importance;
  FAIL("no importance for " << name);
  return 0.0;
}

}  // namespace

TEST_CASE("importance ranks the parameter the value depends on first and the irrelevant one last") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto importances = report::param_importances(trials_of(80, seed, identity));
    REQUIRE(importances.size() == 3);
    CHECK(importances[0].name == "x");
    CHECK(importance_of(importances, "x") > importance_of(importances, "y"));
    CHECK(importance_of(importances, "y") > importance_of(importances, "z"));
    double sum = 0.0;
    for (const auto& p : importances) sum += p.importance;
    CHECK(sum == Approx(1.0));
  }
}

TEST_CASE("importance depends on the values' order only: a monotone transform of the objective changes nothing") {
  const auto plain = report::param_importances(trials_of(40, 7, identity));
  const auto transformed = report::param_importances(trials_of(40, 7, monotone));
  REQUIRE(plain.size() == transformed.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    CHECK(plain[i].name == transformed[i].name);
    CHECK(plain[i].omega_squared == transformed[i].omega_squared);  // the same ranks: the same arithmetic
  }
}

TEST_CASE("importance needs 4 COMPLETE trials and treats an absent conditional parameter as its own bin") {
  CHECK(report::param_importances(trials_of(3, 1, identity)).empty());
  // "k" exists only in trials whose value is high: its presence alone explains the ranks.
  auto trials = trials_of(30, 3, identity);
  for (auto& t : trials) {
    t.values = {t.number % 2 ? 10.0 + t.number : 1.0 * t.number / 100.0};
    if (t.number % 2) {
      t.params["k"] = 1.0;
      t.distributions["k"] = hpo::IntDistribution{1, 4, false, 1};
    }
  }
  const auto importances = report::param_importances(trials);
  REQUIRE_FALSE(importances.empty());
  CHECK(importances[0].name == "k");
  CHECK(importances[0].bins == 2);
  CHECK(importances[0].omega_squared > 0.5);
}
