#include "models/networks/item_fit.hpp"

#include <catch2/catch.hpp>

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

// fit_items' objective for one data set y [P, J] (complete) at items [J, K] (log a, then b_1..b_{K-1}): the
// marginal log-likelihood on its nodes and prior weights minus its ridge, in float64, written out per person.
double penalized_log_likelihood(const torch::Tensor& y, const torch::Tensor& items) {
  const auto f64 = torch::kFloat64;
  const int64_t persons = y.size(0), n_items = y.size(1), nodes = kItemFitNodes;
  const auto theta = torch::arange(nodes, f64) * (8.0 / static_cast<double>(nodes - 1)) - 4.0;
  const auto log_weight = torch::log_softmax(-0.5 * theta.square(), 0);
  const auto a = items.select(1, 0).exp(), b = items.slice(1, 1);
  const auto at_least = torch::sigmoid(a.view({1, n_items, 1}) * (theta.view({nodes, 1, 1}) - b.unsqueeze(0)));
  const auto ones = torch::ones({nodes, n_items, 1}, f64);
  const auto cumulative = torch::cat({ones, at_least, torch::zeros_like(ones)}, 2);
  const auto log_pi = (cumulative.slice(2, 0, -1) - cumulative.slice(2, 1)).log();  // [Q, J, K]
  auto log_lik = torch::zeros({persons, nodes}, f64);
  const auto category = y.to(torch::kLong);
  for (int64_t j = 0; j < n_items; ++j)
    log_lik += log_pi.select(1, j).t().index_select(0, category.select(1, j));  // [P, Q]
  const auto intercept = -a.unsqueeze(1) * b;
  const auto ridge =
      0.5 * kItemFitRidgeSlope * (a - 1.0).square().sum() + 0.5 * kItemFitRidgeIntercept * intercept.square().sum();
  return (torch::logsumexp(log_lik + log_weight, 1).sum() - ridge).item<double>();
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

// Real data are never exactly the model, and there estimators part: on a graded scale like this one, whose
// abilities are bimodal rather than normal, the maximum of the sum of the K-1 splits' binary likelihoods (a
// composite likelihood, this fit's first version) lay 0.03-0.07 from the likelihood's in log a on three of five
// items. fit_items is the likelihood's (as Stan's posterior is): moving any item's log a or one of its
// difficulties by 0.03 lowers its objective. 20 rounds leave log a within 0.002 of the maximum (6 rounds fail
// here); a 0.03 step costs about 0.5 * 300 * 0.03^2 = 0.1 of log-likelihood.
TEST_CASE("fit_items maximizes the marginal likelihood, also where the model is wrong", "[item_fit]") {
  torch::manual_seed(5);
  const int64_t persons = 2000, items = 5, k = 5;
  const auto f64 = torch::kFloat64;
  const auto upper = torch::rand({persons}, f64) < 0.5;
  const auto theta =
      torch::where(upper, 1.0 + 0.6 * torch::randn({persons}, f64), -1.0 + 0.5 * torch::randn({persons}, f64));
  const auto log_a = torch::tensor({0.9, 0.7, 1.1, 0.5, 0.8}, f64);
  const auto b = std::get<0>(torch::sort(1.2 * torch::randn({items, k - 1}, f64), -1));
  const auto at_least =
      torch::sigmoid(log_a.exp().view({1, items, 1}) * (theta.view({persons, 1, 1}) - b.unsqueeze(0)));
  const auto y = (torch::rand({persons, items, 1}, f64) < at_least).to(f64).sum(-1);
  const auto fitted = fit_items(y.unsqueeze(0), torch::ones({1, persons, items}, f64), k)[0];
  const double best = penalized_log_likelihood(y, fitted);
  for (int64_t j = 0; j < items; ++j) {
    for (const int64_t parameter : {int64_t{0}, int64_t{2}}) {
      for (const double step : {-0.03, 0.03}) {
        auto moved = fitted.clone();
        moved[j][parameter] += step;
        INFO("item " << j << ", parameter " << parameter << " moved by " << step);
        CHECK(penalized_log_likelihood(y, moved) < best);
      }
    }
  }
}
