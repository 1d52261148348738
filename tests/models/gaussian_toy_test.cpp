#include <catch2/catch.hpp>

#include "tests/models/gaussian_toy.hpp"

using bfhpo::models::GaussianToy;
using bfhpo::models::GaussianToyConfig;

TEST_CASE("Gaussian toy analytic posterior is calibrated for the true mean", "[simulator]") {
  GaussianToy toy(GaussianToyConfig{1.5, 2.0, 3, 8}, 5, torch::kCPU);
  auto batch = toy.sample_shape(20000, 6, 0);
  auto post = toy.posterior(batch.observations);
  auto z = (batch.params - post.mean) / post.std;
  // Under the exact posterior the true parameter's z-score is N(0,1).
  REQUIRE(z.mean().item<double>() == Approx(0.0).margin(0.02));
  REQUIRE(z.std().item<double>() == Approx(1.0).epsilon(0.02));
  // Posterior variance 1/(1/1.5^2 + 6/2^2).
  REQUIRE(post.std[0][0].item<double>() == Approx(std::sqrt(1.0 / (1.0 / 2.25 + 1.5))));
}

TEST_CASE("Gaussian toy is deterministic and draws N within range", "[simulator]") {
  GaussianToy toy(GaussianToyConfig{}, 9, torch::kCPU);
  for (uint64_t i = 0; i < 10; ++i) {
    auto a = toy.sample(4, i);
    auto b = toy.sample(4, i);
    REQUIRE(torch::equal(a.observations, b.observations));
    REQUIRE(a.observations.size(1) >= 5);
    REQUIRE(a.observations.size(1) <= 20);
  }
}
