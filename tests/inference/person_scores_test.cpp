#include <catch2/catch.hpp>

#include "inference/person_scores.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

struct Simulated {
  inference::ResponseMatrix data;
  torch::Tensor item_params;  // [J, D]
  torch::Tensor abilities;    // [P]
};

Simulated simulate(const models::SimulatorSpec& spec, uint64_t seed) {
  const auto batch = models::Simulator(spec, seed, torch::kCPU).sample(1, 0);
  Simulated out;
  for (int64_t j = 0; j < batch.responses.size(2); ++j) out.data.item_names.push_back("item" + std::to_string(j));
  out.data.responses = batch.responses[0];
  out.data.mask = batch.mask[0];
  out.item_params = batch.item_params[0];
  out.abilities = batch.abilities[0];
  return out;
}

// Draws [J, n, D] holding `sets` ([S] of [J, D]) in turn.
inference::PosteriorDraws draws_of(const std::vector<torch::Tensor>& sets, int64_t n) {
  inference::PosteriorDraws posterior;
  std::vector<torch::Tensor> columns;
  for (int64_t k = 0; k < n; ++k) columns.push_back(sets[static_cast<size_t>(k) % sets.size()]);
  posterior.draws = torch::stack(columns, 1).to(torch::kFloat32);
  posterior.log_prob = torch::zeros({posterior.draws.size(0), n});
  return posterior;
}

// Person p's ability posterior mean and sd given item params [J, D], by a
// Riemann sum on 8,001 abilities over [-8, 8], independently of the grid.
std::pair<double, double> reference_moments(const models::ItemResponseModel& model, const inference::ResponseMatrix& data,
                                            const torch::Tensor& item_params, int64_t p) {
  const auto theta = torch::linspace(-8.0, 8.0, 8001, torch::kFloat64);
  const auto probs = models::category_probabilities(model, theta.unsqueeze(0), item_params.to(torch::kFloat64).unsqueeze(0))[0];
  auto log_density = -0.5 * theta * theta;
  for (int64_t j = 0; j < data.responses.size(1); ++j) {
    if (data.mask[p][j].item<float>() == 0.0f) continue;
    log_density += probs.select(1, j).select(1, data.responses[p][j].item<int64_t>()).log();
  }
  const auto weight = (log_density - log_density.max()).exp();
  const double total = weight.sum().item<double>();
  const double mean = (weight * theta).sum().item<double>() / total;
  const double second = (weight * theta * theta).sum().item<double>() / total;
  return {mean, std::sqrt(second - mean * mean)};
}

}  // namespace

TEST_CASE("score_persons with known items is each person's exact ability posterior", "[person_scores]") {
  for (const auto& spec : {test::simulator_at({8, 8, 40, 40}, "2pl", 2, 0.2), test::simulator_at({6, 6, 40, 40}, "grm", 5, 0.2)}) {
    const auto sim = simulate(spec, 17);
    const auto model = models::make_item_response_model(spec);
    const auto scores = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 10), {});
    REQUIRE(scores.summary.sizes() == std::vector<int64_t>{40, 5});
    // The trapezoid rule at step 0.1 on a Gaussian-like integrand of sd >= 0.3 is exact to far below 1e-6.
    for (int64_t p = 0; p < 40; p += 3) {
      INFO(spec.model << ", person " << p);
      const auto [mean, sd] = reference_moments(*model, sim.data, sim.item_params, p);
      CHECK(scores.summary[p][0].item<double>() == Approx(mean).margin(1e-6));
      CHECK(scores.summary[p][1].item<double>() == Approx(sd).margin(1e-6));
      // Quantiles of the 0.1-wide histogram: within a cell of the smooth posterior's.
      CHECK(scores.summary[p][2].item<double>() < scores.summary[p][3].item<double>());
      CHECK(scores.summary[p][3].item<double>() == Approx(mean).margin(0.25 * sd + 0.05));
      CHECK(scores.summary[p][4].item<double>() > scores.summary[p][3].item<double>());
    }
  }
}

TEST_CASE("score_persons integrates over the item draws (law of total variance), not a plug-in",
          "[person_scores]") {
  const auto spec = test::simulator_at({6, 6, 30, 30}, "2pl");
  const auto sim = simulate(spec, 5);
  const auto model = models::make_item_response_model(spec);
  auto shifted = sim.item_params.clone();
  shifted.select(1, 1) += 0.8;  // every difficulty 0.8 higher: abilities move up
  const auto a = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 4), {});
  const auto b = inference::score_persons(*model, sim.data, draws_of({shifted}, 4), {});
  const auto both = inference::score_persons(*model, sim.data, draws_of({sim.item_params, shifted}, 8), {});
  const auto mean_a = a.summary.select(1, 0), mean_b = b.summary.select(1, 0);
  const auto var_a = a.summary.select(1, 1).square(), var_b = b.summary.select(1, 1).square();
  const auto expected_mean = 0.5 * (mean_a + mean_b);
  const auto expected_var = 0.5 * (var_a + var_b) + 0.25 * (mean_a - mean_b).square();
  // The grid posteriors are float32 (GridAbilityPosterior), each mass rounded to 6e-8 of itself before
  // the mixture adds them: moments over [-6, 6] agree to a few 1e-7.
  INFO("mean " << (both.summary.select(1, 0) - expected_mean).abs().max().item<double>() << ", variance "
                << (both.summary.select(1, 1).square() - expected_var).abs().max().item<double>());
  CHECK(torch::allclose(both.summary.select(1, 0), expected_mean, 0.0, 2e-6));
  CHECK(torch::allclose(both.summary.select(1, 1).square(), expected_var, 0.0, 2e-6));
  CHECK((mean_b > mean_a).all().item<bool>());
}

TEST_CASE("score_persons: a person who answered nothing gets the N(0, 1) prior back", "[person_scores]") {
  const auto spec = test::simulator_at({5, 5, 20, 20}, "grm", 3, 0.0);
  auto sim = simulate(spec, 3);
  sim.data.mask[4].zero_();
  sim.data.responses[4].zero_();
  const auto model = models::make_item_response_model(spec);
  const auto scores = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 3), {});
  CHECK(scores.summary[4][0].item<double>() == Approx(0.0).margin(1e-9));
  CHECK(scores.summary[4][1].item<double>() == Approx(1.0).margin(1e-6));
  // 1.96 of the N(0, 1), read from the 0.1-wide histogram: within a few thousandths.
  CHECK(scores.summary[4][4].item<double>() == Approx(1.96).margin(0.01));
  CHECK(scores.summary[4][2].item<double>() == Approx(-1.96).margin(0.01));
  CHECK(scores.person_ids[4] == "5");
}

TEST_CASE("score_persons: intervals cover the simulated abilities; plausible values follow the posterior",
          "[person_scores]") {
  const auto spec = test::simulator_at({20, 20, 2000, 2000}, "2pl", 2, 0.1);
  const auto sim = simulate(spec, 29);
  const auto model = models::make_item_response_model(spec);
  inference::PersonScoreOptions options;
  options.plausible_values = 5;
  options.seed = 4;
  const auto scores = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 2), options);
  const auto covered = ((sim.abilities.to(torch::kFloat64) >= scores.summary.select(1, 2)) &
                        (sim.abilities.to(torch::kFloat64) <= scores.summary.select(1, 4)))
                           .to(torch::kFloat64)
                           .mean()
                           .item<double>();
  // 95% intervals with known items, 2,000 persons: binomial sd 0.49 points; 4 sd either side.
  CHECK(covered == Approx(0.95).margin(0.02));
  // Plausible values: draws of each person's posterior, so their z-scores against it are N(0, 1) overall.
  REQUIRE(scores.plausible_values.sizes() == std::vector<int64_t>{2000, 5});
  const auto z = (scores.plausible_values - scores.summary.select(1, 0).unsqueeze(1)) / scores.summary.select(1, 1).unsqueeze(1);
  CHECK(z.mean().item<double>() == Approx(0.0).margin(0.04));  // 10,000 z's: sd of the mean 0.01
  CHECK(z.std().item<double>() == Approx(1.0).margin(0.03));
  // The same seed, the same values; another seed, others.
  const auto again = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 2), options);
  CHECK(torch::equal(again.plausible_values, scores.plausible_values));
  options.seed = 5;
  const auto other = inference::score_persons(*model, sim.data, draws_of({sim.item_params}, 2), options);
  CHECK_FALSE(torch::equal(other.plausible_values, scores.plausible_values));
}
