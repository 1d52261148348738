#include <catch2/catch.hpp>

#include "inference/spread_at_shape.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"

#include <cmath>

using namespace bfhpo;

namespace {

// The share of the truths of `sets` fresh data sets (simulated from another seed than the calibration's) inside
// the central 80% interval of the model's draws, per parameter.
std::vector<double> coverage_of_fresh_sets(inference::TrainedModel& model, const models::SimulatorSpec& simulator,
                                           int64_t sets, int64_t draws) {
  const models::Simulator fresh(simulator, 77, torch::kCPU);
  std::vector<double> inside(2, 0.0);
  double items = 0.0;
  for (int64_t k = 0; k < sets; ++k) {
    const auto batch = fresh.sample(1, static_cast<uint64_t>(k));
    const auto posterior = inference::infer_posterior(model, test::data_of(batch), draws, 3 + static_cast<uint64_t>(k));
    const auto rank = posterior.draws.to(torch::kFloat64).lt(batch.item_params[0].to(torch::kFloat64).unsqueeze(1))
                          .to(torch::kFloat64)
                          .mean(1);  // [J, D]
    const auto in = (rank - 0.5).abs().le(0.4).to(torch::kFloat64).sum(0);
    for (int d = 0; d < 2; ++d) inside[static_cast<size_t>(d)] += in[d].item<double>();
    items += static_cast<double>(rank.size(0));
  }
  for (double& share : inside) share /= items;
  return inside;
}

}  // namespace

TEST_CASE("spread_at_shape: the scales make the flow's 80% intervals cover 80% of fresh data sets' truths",
          "[spread_at_shape]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.0);
  auto model = test::untrained_model(simulator);
  constexpr int64_t kDraws = 200;
  const auto spread = inference::spread_at_shape(model, 40, 6, 0.0, kDraws);
  // An untrained flow is far from calibrated: a scale for it is no small correction.
  REQUIRE_FALSE(spread.is_identity());
  // Deterministic.
  CHECK(inference::spread_at_shape(model, 40, 6, 0.0, kDraws).scales() == spread.scales());

  model.spread = inference::PosteriorSpread{};
  const auto own = coverage_of_fresh_sets(model, simulator, 100, kDraws);
  model.spread = spread;
  const auto scaled = coverage_of_fresh_sets(model, simulator, 100, kDraws);
  // 600 fresh items: a binomial sd of 1.6 points at 80%; the scale, from 1,284 simulated items, adds about as
  // much again. Within 4 of the two together: 9 points.
  for (size_t d = 0; d < 2; ++d) {
    INFO("parameter " << d << ": scale " << spread.scales()[d] << ", coverage " << own[d] << " unscaled, " << scaled[d]
                      << " scaled");
    CHECK(std::abs(scaled[d] - 0.8) < 0.09);
    if (std::abs(spread.scales()[d] - 1.0) > 0.3) CHECK(std::abs(own[d] - 0.8) > 0.09);
  }
}

TEST_CASE("infer_posterior without a spread set measures it at the data's shape", "[spread_at_shape]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.0);
  auto model = test::untrained_model(simulator);
  const auto data = test::data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  const auto measured = inference::infer_posterior(model, data, 150, 5);
  CHECK(measured.spread.scales() == inference::spread_at_shape(model, 40, 6, 0.0, 150).scales());
  inference::ShapeSpreads spreads;
  const auto kept = inference::infer_posterior(model, data, 150, 5, std::nullopt, &spreads);
  CHECK(spreads.size() == 1);
  CHECK(torch::equal(kept.draws, measured.draws));
  model.spread = inference::PosteriorSpread{};
  CHECK(inference::infer_posterior(model, data, 150, 5).spread.is_identity());
}
