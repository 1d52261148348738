#include <catch2/catch.hpp>

#include <cmath>

#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"

using namespace bfhpo::models;

using bfhpo::test::tiny_spec;

TEST_CASE("approximator: shapes of loss, log_prob and sample, the NLL is the mean -log_prob of the original space", "[approximator]") {
  torch::manual_seed(1);
  auto approximator = make_approximator(tiny_spec());
  const Simulator simulator(bfhpo::test::simulator_at({6, 6, 40, 40}), 3, torch::kCPU);
  const auto batch = simulator.sample(4, 0);
  const auto terms = approximator->loss(batch.responses, batch.item_params);  // training: inits actnorm, stats
  CHECK_FALSE(terms.calibration.defined());
  approximator->eval();
  const auto log_q = approximator->log_prob(batch.item_params, batch.responses);
  REQUIRE(log_q.sizes() == torch::IntArrayRef({4, 6}));
  const auto draws = approximator->sample(5, batch.responses).first;
  REQUIRE(draws.sizes() == torch::IntArrayRef({4, 6, 5, 2}));
  // In eval mode the loss's NLL is the mean -log_prob in the original space.
  const auto nll = approximator->loss(batch.responses, batch.item_params).nll;
  CHECK(nll.item<double>() == Approx(-log_q.mean().item<double>()).epsilon(1e-6));
}

TEST_CASE("approximator: each draw's log q from sample() is log_prob's for it", "[approximator]") {
  torch::manual_seed(5);
  auto approximator = make_approximator(tiny_spec());
  const Simulator simulator(bfhpo::test::simulator_at({6, 6, 40, 40}), 6, torch::kCPU);
  const auto batch = simulator.sample(3, 0);
  approximator->loss(batch.responses, batch.item_params);  // actnorm and standardization fitted
  torch::NoGradGuard no_grad;
  // Away from a fresh flow's identity couplings (their output layers start at zero): every weight perturbed.
  for (auto& parameter : approximator->parameters()) parameter.add_(0.3 * torch::randn_like(parameter));
  approximator->eval();
  const auto [draws, log_q] = approximator->sample(20, batch.responses);
  REQUIRE(log_q.sizes() == torch::IntArrayRef({3, 6, 20}));
  const auto recomputed = approximator->log_prob(draws, batch.responses);
  CHECK(log_q.std().item<double>() > 0.1);  // not a constant that would match anything
  // float32: the inverse and forward passes round differently, ~1e-6 relative a layer on values of order 10.
  CHECK(torch::allclose(log_q, recomputed, 1e-4, 1e-3));
}

TEST_CASE("approximator: log_prob in the original space integrates to one", "[approximator]") {
  torch::manual_seed(2);
  auto approximator = make_approximator(tiny_spec());
  const Simulator simulator(bfhpo::test::simulator_at({1, 1, 30, 30}), 4, torch::kCPU);
  const auto batch = simulator.sample(64, 0);
  approximator->loss(batch.responses, batch.item_params);  // fits the standardization to the prior's scale
  approximator->eval();
  torch::NoGradGuard no_grad;
  const auto one = batch.responses.slice(0, 0, 1);
  const int n = 241;
  const auto log_a = torch::linspace(-3.0, 3.0, n);
  const auto b = torch::linspace(-6.0, 6.0, n);
  const auto grid = torch::stack(torch::meshgrid({log_a, b}, "ij"), -1).reshape({1, -1, 2});
  // One dataset with n*n "items" would change the summary; evaluate the flow per
  // grid point under the same single-item response matrix instead.
  const auto responses = one.expand({grid.size(1), one.size(1), 1});
  const auto log_q = approximator->log_prob(grid.reshape({-1, 1, 2}), responses.contiguous());
  const double cell = (6.0 / (n - 1)) * (12.0 / (n - 1));
  CHECK(log_q.exp().sum().item<double>() * cell == Approx(1.0).margin(0.02));
}

TEST_CASE("calibrated approximator: weight 0 gives the continuous loss, the penalty is positive", "[approximator]") {
  auto spec = tiny_spec();
  const Simulator simulator(bfhpo::test::simulator_at({5, 5, 30, 30}), 7, torch::kCPU);
  const auto batch = simulator.sample(6, 0);
  torch::manual_seed(3);
  auto plain = make_approximator(spec);
  const double plain_nll = plain->loss(batch.responses, batch.item_params).total.item<double>();
  spec.calibration.enabled = true;
  spec.calibration.weight = 0.0;
  spec.calibration.n_post_samples = 20;
  spec.calibration.log_prob_chunk_size = 7;
  torch::manual_seed(3);
  auto calibrated = make_approximator(spec);
  const auto terms = calibrated->loss(batch.responses, batch.item_params);
  CHECK(terms.total.item<double>() == Approx(plain_nll).epsilon(1e-6));
  REQUIRE(terms.calibration.defined());
  CHECK(terms.calibration.item<double>() == 0.0);
  spec.calibration.weight = 1.0;
  torch::manual_seed(3);
  auto weighted = make_approximator(spec);
  const auto weighted_terms = weighted->loss(batch.responses, batch.item_params);
  CHECK(weighted_terms.calibration.item<double>() >= 0.0);
  CHECK(weighted_terms.total.item<double>() ==
        Approx(weighted_terms.nll.item<double>() + weighted_terms.calibration.item<double>()));
  weighted_terms.total.backward();
  for (const auto& p : weighted->parameters()) REQUIRE(p.grad().defined());
}

TEST_CASE("approximator: every model's target and categories, with missing responses", "[approximator]") {
  struct Case {
    const char* model;
    int64_t categories;
  };
  for (const auto& [model, categories] : {Case{"rasch", 2}, Case{"2pl", 2}, Case{"3pl", 2}, Case{"grm", 4}}) {
    INFO(model);
    const auto simulator_spec = bfhpo::test::simulator_at({5, 5, 30, 30}, model, categories, 0.2);
    const Simulator simulator(simulator_spec, 9, torch::kCPU);
    torch::manual_seed(4);
    auto approximator = make_approximator(bfhpo::test::tiny_spec_for(simulator_spec));
    const auto batch = simulator.sample(3, 0);
    const auto terms = approximator->loss(batch.responses, batch.item_params, batch.mask);
    CHECK(std::isfinite(terms.total.item<double>()));
    terms.total.backward();
    approximator->eval();
    const auto draws = approximator->sample(4, batch.responses, batch.mask).first;
    REQUIRE(draws.sizes() == torch::IntArrayRef({3, 5, 4, simulator.param_dim()}));
    // The mask reaches the summary: the same responses read as complete data give another condition.
    const auto masked = approximator->summary_network()->forward(batch.responses, batch.mask).global;
    const auto complete = approximator->summary_network()->forward(batch.responses).global;
    CHECK_FALSE(torch::allclose(masked, complete));
  }
}
