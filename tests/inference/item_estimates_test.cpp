#include <catch2/catch.hpp>

#include "tests/inference/simulated_responses.hpp"
#include "inference/item_estimates.hpp"

#include <cmath>

using namespace bfhpo;

namespace {

double max_abs(const torch::Tensor& x) { return x.abs().max().item<double>(); }

}  // namespace

// At 3,000 persons a 2PL item's posterior sd is about 0.05-0.1 in log a and b (wider for items far off the
// abilities), so the mode lies within 0.4 of the truth for every item and within 0.15 on average; a wrong
// likelihood, prior or parametrisation moves it by more.
TEST_CASE("estimate_item_parameters: the 2PL's items recovered from 3,000 persons, missing cells left out",
          "[item_estimates]") {
  models::SimulatorSpec spec;
  spec.model = "2pl";
  spec.priors.log_a = {0.8, 0.4};  // discriminations of a real personality scale, in the default prior's tail
  spec.missing = {0.1, 0.1};
  torch::Tensor truth;
  const auto data = test::simulated_responses(spec, 12, 3000, 7, &truth);
  const auto model = models::make_item_response_model(spec);
  const auto estimate = inference::estimate_item_parameters(*model, data);
  REQUIRE(estimate.sizes() == truth.sizes());
  REQUIRE(estimate.scalar_type() == torch::kFloat64);
  const auto error = estimate - truth;
  INFO("log a error " << error.select(1, 0) << "\nb error " << error.select(1, 1));
  CHECK(error.select(1, 0).abs().mean().item<double>() < 0.15);
  CHECK(error.select(1, 1).abs().mean().item<double>() < 0.15);
  CHECK(max_abs(error) < 0.4);
  CHECK(std::abs(error.select(1, 0).mean().item<double>()) < 0.1);  // the scale's discrimination, as init reads it
}

TEST_CASE("estimate_item_parameters: a graded model's thresholds recovered in order", "[item_estimates]") {
  models::SimulatorSpec spec;
  spec.model = "grm";
  spec.n_categories = 6;
  spec.priors.log_a = {0.6, 0.4};
  torch::Tensor truth;
  const auto data = test::simulated_responses(spec, 6, 3000, 11, &truth);
  const auto model = models::make_item_response_model(spec);
  const auto estimate = inference::estimate_item_parameters(*model, data);
  REQUIRE(estimate.sizes() == truth.sizes());
  const auto thresholds = estimate.narrow(1, 1, 5);
  CHECK((thresholds.narrow(1, 1, 4) > thresholds.narrow(1, 0, 4)).all().item<bool>());
  const auto error = estimate - truth;
  INFO("error " << error);
  CHECK(error.select(1, 0).abs().mean().item<double>() < 0.15);
  CHECK(error.narrow(1, 1, 5).abs().mean().item<double>() < 0.15);
  CHECK(max_abs(error) < 0.5);
}

// The mode of the posterior moves toward the prior where the data say little: with 40 persons a strong
// prior on log a pulls every item's estimate toward its mean, with 3,000 it hardly matters.
TEST_CASE("estimate_item_parameters: the prior weighs in where the persons are few", "[item_estimates]") {
  models::SimulatorSpec spec;
  spec.model = "2pl";
  spec.priors.log_a = {0.0, 0.5};
  const auto few = test::simulated_responses(spec, 8, 40, 3);
  auto tight = spec;
  tight.priors.log_a = {0.0, 0.05};
  const auto loose = inference::estimate_item_parameters(*models::make_item_response_model(spec), few);
  const auto pulled = inference::estimate_item_parameters(*models::make_item_response_model(tight), few);
  CHECK(pulled.select(1, 0).abs().max().item<double>() < 0.15);
  CHECK(loose.select(1, 0).abs().max().item<double>() > 0.2);
}

TEST_CASE("check_item_estimate_memory: over the budget, the data file and the most persons that fit",
          "[item_estimates]") {
  // A million persons: each persons x grid table alone is 968 MB.
  CHECK(inference::item_estimate_memory_mb(1'000'000, 6, 2) > 4 * 968e6 / (1024.0 * 1024.0));
  CHECK(inference::item_estimate_memory_mb(2000, 6, 2) == Approx(2 * inference::item_estimate_memory_mb(1000, 6, 2)));
  inference::ResponseMatrix data;
  data.source = "big.csv";
  data.responses = torch::zeros({1000, 6});
  data.mask = torch::ones({1000, 6});
  const double need = inference::item_estimate_memory_mb(1000, 6, 2);
  CHECK_NOTHROW(inference::check_item_estimate_memory(data, 2, need));
  const double budget = need / 4;
  const auto fitting = static_cast<int64_t>(std::floor(budget / inference::item_estimate_memory_mb(1, 6, 2)));
  CHECK(inference::item_estimate_memory_mb(fitting, 6, 2) <= budget);
  CHECK(inference::item_estimate_memory_mb(fitting + 1, 6, 2) > budget);
  CHECK_THROWS_WITH(inference::check_item_estimate_memory(data, 2, budget),
                    Catch::StartsWith("big.csv: estimating each item's parameters on 1000 persons x 6 items") &&
                        Catch::Contains("Fix: give a random sample of at most " + std::to_string(fitting) + " persons"));
}
