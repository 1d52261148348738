#include <catch2/catch.hpp>

#include "inference/posterior_spread.hpp"
#include "models/diagnostics.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"

#include <cmath>

using namespace bfhpo;
using nlohmann::json;

namespace {

// Diagnostics whose z sd makes from_diagnostics give `scales` at n draws.
json diagnostics_for(const std::vector<std::pair<std::string, double>>& scales, int64_t n_draws) {
  const double n = static_cast<double>(n_draws);
  const double calibrated = std::sqrt((1.0 + 1.0 / n) * (n - 1.0) / (n - 3.0));
  json parameters = json::array();
  for (const auto& [name, scale] : scales) parameters.push_back({{"name", name}, {"z_std", scale * calibrated}});
  return {{"n_datasets", 100}, {"n_draws", n_draws}, {"parameters", parameters}};
}

}  // namespace

TEST_CASE("PosteriorSpread: a calibrated posterior's z sd, measured from few draws, gives the scale 1",
          "[posterior_spread]") {
  // 200,000 data sets whose posterior is exactly N(m, 1) and whose truth is drawn from it; z from 10 draws each.
  // Its sd is sqrt(1.1 x 9 / 7) = 1.19, not 1: a scale taken as the raw z sd would be 1.19.
  torch::manual_seed(5);
  constexpr int64_t kSets = 200000, kDraws = 10;
  const auto center = 3.0 * torch::randn({kSets, 1, 1}, torch::kFloat64);
  const auto truths = center.squeeze(1) + torch::randn({kSets, 1}, torch::kFloat64);
  const auto draws = center + torch::randn({kSets, kDraws, 1}, torch::kFloat64);
  const double z_sd = models::posterior_z_scores(draws, truths).std().item<double>();
  CHECK(z_sd > 1.15);
  // A posterior 20% too wide shows z sd 1.19 / 1.2 at 10 draws, one 20% too narrow 1.19 / 0.8: scales 1.2 and 0.8.
  const json diagnostics = {{"n_draws", kDraws},
                            {"parameters", {{{"name", "log_a"}, {"z_std", z_sd / 1.2}}, {{"name", "b"}, {"z_std", z_sd / 0.8}}}}};
  const auto spread = inference::PosteriorSpread::from_diagnostics(diagnostics, {"log_a", "b"});
  REQUIRE(spread.scales().size() == 2);
  // The sd of 200,000 z-scores has a relative standard error of 1 / sqrt(2 x 200,000) = 0.0016: 0.01 is 6 of them.
  CHECK(spread.scales()[0] == Approx(1.0 / 1.2).epsilon(0.01));
  CHECK(spread.scales()[1] == Approx(1.0 / 0.8).epsilon(0.01));
  // The calibrated posterior's own z sd: no scale.
  const json calibrated = {{"n_draws", kDraws}, {"parameters", {{{"name", "b"}, {"z_std", z_sd}}}}};
  CHECK(inference::PosteriorSpread::from_diagnostics(calibrated, {"b"}).is_identity());
}

TEST_CASE("PosteriorSpread: a scale within 5% of 1 is left at 1", "[posterior_spread]") {
  const std::vector<std::string> names{"log_a", "b"};
  CHECK(inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", 0.96}, {"b", 1.04}}, 100), names)
            .is_identity());
  const auto spread =
      inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", 0.9}, {"b", 1.04}}, 100), names);
  REQUIRE(spread.scales().size() == 2);
  CHECK(spread.scales()[0] == Approx(0.9).epsilon(1e-12));
  CHECK(spread.scales()[1] == 1.0);
  CHECK(spread.log_scale_sum() == Approx(std::log(0.9)).epsilon(1e-12));
}

TEST_CASE("PosteriorSpread: diagnostics without every parameter's z sd leave the flow's own spread",
          "[posterior_spread]") {
  const std::vector<std::string> names{"log_a", "b"};
  CHECK_FALSE(inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", 0.9}, {"b", 1.1}}, 100), names)
                  .is_identity());
  CHECK(inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", 0.9}}, 100), names).is_identity());
  CHECK(inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", 0.9}, {"b", 1.1}}, 3), names)
            .is_identity());
  CHECK(inference::PosteriorSpread::from_diagnostics(nullptr, names).is_identity());
  auto broken = diagnostics_for({{"log_a", 0.9}, {"b", 1.1}}, 100);
  broken["parameters"][1]["z_std"] = nullptr;  // how a NaN is written
  CHECK(inference::PosteriorSpread::from_diagnostics(broken, names).is_identity());
  broken["parameters"][1]["z_std"] = 0.0;
  CHECK(inference::PosteriorSpread::from_diagnostics(broken, names).is_identity());
}

TEST_CASE("infer_posterior with a spread: each item's flow draws scaled about their mean, log q the mapped "
          "density",
          "[posterior_spread]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.0);
  auto model = test::untrained_model(simulator);
  const auto data = test::data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  const auto flow = inference::infer_posterior(model, data, 300, 5);
  const double scale_a = 0.8, scale_b = 1.25;
  model.spread = inference::PosteriorSpread::from_diagnostics(diagnostics_for({{"log_a", scale_a}, {"b", scale_b}}, 100),
                                                              {"log_a", "b"});
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
  model.spread = inference::PosteriorSpread::from_diagnostics(
      diagnostics_for({{"log_a", 0.9}, {"b1", 1.3}, {"b2", 0.7}, {"b3", 1.3}}, 100), {"log_a", "b1", "b2", "b3"});
  const auto posterior = inference::infer_posterior(model, data, 200, 11);
  const auto thresholds = posterior.draws.narrow(-1, 1, 3);
  CHECK((thresholds.narrow(-1, 1, 2) > thresholds.narrow(-1, 0, 2)).all().item<bool>());
  CHECK(torch::allclose(inference::amortized_log_prob(model, data, posterior.draws, posterior), posterior.log_prob,
                        1e-4, 1e-3));
}
