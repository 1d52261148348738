#include <catch2/catch.hpp>

#include "inference/posterior_spread.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"

#include <cmath>

using namespace bfhpo;
using nlohmann::json;

TEST_CASE("PosteriorSpread: a scale within 5% of 1 is left at 1", "[posterior_spread]") {
  CHECK(inference::PosteriorSpread::from_scales({0.96, 1.04}).is_identity());
  const auto spread = inference::PosteriorSpread::from_scales({0.9, 1.04});
  REQUIRE(spread.scales().size() == 2);
  CHECK(spread.scales()[0] == 0.9);
  CHECK(spread.scales()[1] == 1.0);
  CHECK(spread.log_scale_sum() == Approx(std::log(0.9)).epsilon(1e-12));
  CHECK(spread.to_json({"log_a", "b"}) == json{{"log_a", 0.9}, {"b", 1.0}});
}

TEST_CASE("PosteriorSpread: a scale that is not finite or not positive leaves the flow's own spread",
          "[posterior_spread]") {
  CHECK_FALSE(inference::PosteriorSpread::from_scales({0.9, 1.1}).is_identity());
  CHECK(inference::PosteriorSpread::from_scales({0.9, NAN}).is_identity());
  CHECK(inference::PosteriorSpread::from_scales({0.9, 0.0}).is_identity());
  CHECK(inference::PosteriorSpread::from_scales({INFINITY, 1.1}).is_identity());
  CHECK(inference::PosteriorSpread{}.to_json({"log_a", "b"}).is_null());
}

TEST_CASE("infer_posterior with a spread: each item's flow draws scaled about their mean, log q the mapped "
          "density",
          "[posterior_spread]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.0);
  auto model = test::untrained_model(simulator);
  const auto data = test::data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  model.spread = inference::PosteriorSpread{};
  const auto flow = inference::infer_posterior(model, data, 300, 5);
  const double scale_a = 0.8, scale_b = 1.25;
  model.spread = inference::PosteriorSpread::from_scales({scale_a, scale_b});
  const auto mapped = inference::infer_posterior(model, data, 300, 5);

  // A 2PL draw is always inside the support: one round, so the center is the flow draws' mean.
  const auto flow_mean = flow.draws.mean(1);
  CHECK(torch::allclose(mapped.spread_center, flow_mean));
  CHECK(torch::allclose(mapped.draws.mean(1), flow_mean, 1e-5, 1e-5));
  const auto sd_ratio = mapped.draws.std(1) / flow.draws.std(1);  // [J, 2]
  CHECK(torch::allclose(sd_ratio.select(1, 0), torch::full({6}, scale_a), 1e-4, 1e-4));
  CHECK(torch::allclose(sd_ratio.select(1, 1), torch::full({6}, scale_b), 1e-4, 1e-4));
  // The density of the mapped draws: the flow's at the preimage, over the scales' product.
  CHECK(torch::allclose(mapped.log_prob, flow.log_prob - std::log(scale_a * scale_b), 1e-5, 1e-4));
  // amortized_log_prob inverts the map: it gives the draws' own log q back (a fresh pass of the flow, float32).
  CHECK(torch::allclose(inference::amortized_log_prob(model, data, mapped.draws, mapped), mapped.log_prob, 1e-4, 1e-3));
  const auto summary = mapped.summary_json();
  CHECK(summary["spread_calibration"]["log_a"].get<double>() == Approx(scale_a).epsilon(1e-12));
  CHECK(flow.summary_json()["spread_calibration"].is_null());
}

TEST_CASE("infer_posterior with a spread: graded thresholds narrowed stay in order, as the prior allows",
          "[posterior_spread]") {
  const auto simulator = test::simulator_at({5, 5, 30, 30}, "grm", 4, 0.0);
  auto model = test::untrained_model(simulator);
  const auto data = test::data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  model.spread = inference::PosteriorSpread::from_scales({0.9, 1.3, 0.7, 1.3});
  const auto posterior = inference::infer_posterior(model, data, 200, 11);
  const auto thresholds = posterior.draws.narrow(-1, 1, 3);
  CHECK((thresholds.narrow(-1, 1, 2) > thresholds.narrow(-1, 0, 2)).all().item<bool>());
  CHECK(torch::allclose(inference::amortized_log_prob(model, data, posterior.draws, posterior), posterior.log_prob,
                        1e-4, 1e-3));
}
