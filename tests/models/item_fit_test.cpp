#include <catch2/catch.hpp>

#include "models/networks/item_fit.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"


using namespace bfhpo::models;
using bfhpo::test::simulator_at;

namespace {

// Fits a batch simulated from `spec` and returns fit - truth [B, J, D] (float64).
torch::Tensor fit_error(const SimulatorSpec& spec, int64_t batch, int64_t items, int64_t persons, uint64_t seed) {
  const Simulator simulator(spec, seed, torch::kCPU);
  const auto sample = simulator.sample_shape(batch, items, persons, 0);
  const auto fit = fit_items(sample.responses, sample.mask, spec.n_categories);
  REQUIRE(fit.sizes() == sample.item_params.sizes());
  return (fit - sample.item_params).to(torch::kFloat64);
}

}  // namespace

// At 3,000 persons an item's 2PL slope has a standard error of about 0.05-0.1 on the log scale and its difficulty
// 0.05-0.15 (Fisher information of a logistic curve); EM's estimates land within a few standard errors: the
// bounds are five of them, and the mean error (bias) two.
TEST_CASE("fit_items recovers 2PL items by marginal maximum likelihood, with missing cells", "[item_fit]") {
  const auto error = fit_error(simulator_at({10, 10, 3000, 3000}, "2pl", 2, 0.1), 2, 10, 3000, 7);
  const auto log_a = error.select(-1, 0), b = error.select(-1, 1);
  CHECK(log_a.abs().mean().item<double>() < 0.12);
  CHECK(log_a.mean().abs().item<double>() < 0.06);
  CHECK(b.abs().mean().item<double>() < 0.15);
  CHECK(b.abs().max().item<double>() < 0.6);
}

TEST_CASE("fit_items recovers a graded scale's slope and ordered thresholds", "[item_fit]") {
  const auto error = fit_error(simulator_at({6, 6, 3000, 3000}, "grm", 5), 2, 6, 3000, 11);
  CHECK(error.select(-1, 0).abs().mean().item<double>() < 0.1);
  CHECK(error.slice(-1, 1).abs().mean().item<double>() < 0.15);
}

TEST_CASE("fit_items is a function of each data set alone and keeps an all-alike item finite", "[item_fit]") {
  const Simulator simulator(simulator_at({5, 5, 200, 200}, "2pl"), 3, torch::kCPU);
  auto sample = simulator.sample_shape(3, 5, 200, 0);
  sample.responses.select(2, 4).fill_(1.0);  // item 4 answered 1 by everyone
  const auto together = fit_items(sample.responses, sample.mask, 2);
  const auto alone = fit_items(sample.responses.slice(0, 1, 2), sample.mask.slice(0, 1, 2), 2);
  CHECK(torch::allclose(together.slice(0, 1, 2), alone, 1e-5, 1e-5));  // the same sums: rounding only
  CHECK(together.isfinite().all().item<bool>());
  CHECK((together.select(1, 4).select(-1, 1) < -2.0).all().item<bool>());  // far below everyone's ability
}

