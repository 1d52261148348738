#include <catch2/catch.hpp>

#include "models/simulators/irt_simulator.hpp"

using bfhpo::models::IrtRanges;
using bfhpo::models::IrtSimulator;

TEST_CASE("IRT simulator is deterministic in (seed, batch index)", "[simulator]") {
  IrtSimulator sim(IrtRanges{}, 7, torch::kCPU);
  auto a = sim.sample(3, 11);
  auto b = sim.sample(3, 11);
  auto c = sim.sample(3, 12);
  REQUIRE(torch::equal(a.responses, b.responses));
  REQUIRE(torch::equal(a.item_params, b.item_params));
  const bool same = a.item_params.sizes() == c.item_params.sizes() &&
                    torch::equal(a.item_params, c.item_params);
  REQUIRE_FALSE(same);
}

TEST_CASE("IRT simulator shapes stay within the configured ranges", "[simulator]") {
  IrtRanges r{4, 6, 10, 12};
  IrtSimulator sim(r, 1, torch::kCPU);
  for (uint64_t i = 0; i < 20; ++i) {
    auto batch = sim.sample(2, i);
    const auto J = batch.item_params.size(1);
    const auto P = batch.responses.size(1);
    REQUIRE(J >= 4);
    REQUIRE(J <= 6);
    REQUIRE(P >= 10);
    REQUIRE(P <= 12);
    REQUIRE(batch.responses.sizes().vec() == std::vector<int64_t>{2, P, J});
  }
}

TEST_CASE("IRT simulator follows the 2PL priors and response model", "[simulator]") {
  IrtSimulator sim(IrtRanges{}, 3, torch::kCPU);
  auto batch = sim.sample_shape(400, 20, 200, 0);
  auto log_a = batch.item_params.select(-1, 0);
  auto b = batch.item_params.select(-1, 1);
  REQUIRE(log_a.std().item<double>() == Approx(0.5).epsilon(0.03));
  REQUIRE(b.std().item<double>() == Approx(1.0).epsilon(0.03));
  REQUIRE(batch.abilities.std().item<double>() == Approx(1.0).epsilon(0.03));
  // Empirical response rate matches the mean 2PL probability.
  auto p = torch::sigmoid(log_a.exp().unsqueeze(1) *
                          (batch.abilities.unsqueeze(2) - b.unsqueeze(1)));
  REQUIRE(batch.responses.mean().item<double>() ==
          Approx(p.mean().item<double>()).margin(0.005));
}
