#include <catch2/catch.hpp>

#include "inference/grid_ability_posterior.hpp"
#include "inference/marginal_likelihood.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"

#include <string>

using namespace bfhpo;

namespace {

struct Simulated {
  inference::ResponseMatrix data;  // the first data set of the batch
  torch::Tensor item_params;       // [sets, J, D]: every data set's item parameters, the first the data's own
};

Simulated simulate(const models::SimulatorSpec& spec, uint64_t seed, int64_t sets) {
  const auto batch = models::Simulator(spec, seed, torch::kCPU).sample(sets, 0);
  Simulated out;
  for (int64_t j = 0; j < batch.responses.size(2); ++j) out.data.item_names.push_back("item" + std::to_string(j));
  out.data.responses = batch.responses[0];
  out.data.mask = batch.mask[0];
  out.item_params = batch.item_params;
  return out;
}

}  // namespace

TEST_CASE("GridAbilityPosterior is the float64 person-grid table normalized, to float32's rounding",
          "[grid_ability_posterior]") {
  // 2PL and a graded model of 5 categories, 20% of the cells missing, three sets of item parameters each:
  // the posterior over the grid from MarginalLikelihood's table (float64: prod_j p(y_pj | theta_g) scaled,
  // times the trapezoid and N(0, 1) weights, over its integral), against the float32 one.
  for (const auto& spec : {test::simulator_at({12, 12, 60, 60}, "2pl", 2, 0.2), test::simulator_at({8, 8, 60, 60}, "grm", 5, 0.2)}) {
    const auto [data, params] = simulate(spec, 23, 3);
    const auto model = models::make_item_response_model(spec);

    const auto posterior = inference::GridAbilityPosterior(*model, data)(params);
    REQUIRE(posterior.sizes() == std::vector<int64_t>{3, 60, inference::kAbilityGridPoints});
    REQUIRE(posterior.scalar_type() == torch::kFloat32);
    const auto table = inference::MarginalLikelihood(*model, data).table(params);
    const double step = 2.0 * inference::kAbilityLimit / static_cast<double>(inference::kAbilityGridPoints - 1);
    auto weight = (-0.5 * torch::linspace(-inference::kAbilityLimit, inference::kAbilityLimit, inference::kAbilityGridPoints,
                                          torch::kFloat64).square())
                      .exp() * step;
    weight[0] *= 0.5;
    weight[inference::kAbilityGridPoints - 1] *= 0.5;
    const auto unnormalized = table.scaled * weight;
    const auto expected = unnormalized / unnormalized.sum(2, true);
    INFO(spec.model << ": largest difference " << (posterior.to(torch::kFloat64) - expected).abs().max().item<double>());
    // A log likelihood of at most 12 answers in float32 is off by ~12 x 6e-8 of its size (|log p| < 20 at
    // the grid's ends), so a mass by ~1.5e-5 of itself; masses are at most 1.
    CHECK(torch::allclose(posterior.to(torch::kFloat64), expected, 2e-5, 1e-7));
  }
}

TEST_CASE("GridAbilityPosterior's marginal likelihood is MarginalLikelihood's, to float32's rounding",
          "[grid_ability_posterior]") {
  // 300 persons x 30 items with 20% missing (2PL) and 300 x 10 of 5 categories: 20 sets of item parameters
  // each, more than one chunk's table at these sizes, so the chunks and their order count too.
  for (const auto& spec : {test::simulator_at({30, 30, 300, 300}, "2pl", 2, 0.2), test::simulator_at({10, 10, 300, 300}, "grm", 5, 0.2)}) {
    const auto [data, params] = simulate(spec, 31, 20);
    const auto model = models::make_item_response_model(spec);
    const auto from_grid = inference::GridAbilityPosterior(*model, data).log_marginal_likelihood(params);
    const auto exact = inference::MarginalLikelihood(*model, data).log_likelihood(params);
    REQUIRE(from_grid.scalar_type() == torch::kFloat64);
    INFO(spec.model << ": largest difference " << (from_grid - exact).abs().max().item<double>() << " of "
                    << exact.abs().min().item<double>());
    // Each person's log integral (|.| < 30 here) in float32 is off by at most ~1e-5 (sums of 30 float
    // log probabilities, then a float logsumexp); 300 of them add to at most 3e-3, far below the spread
    // of the sets' log likelihoods (hundreds) that importance weights read.
    CHECK(torch::allclose(from_grid, exact, 0.0, 3e-3));
    // A set's log likelihood moves as the set does: the ordering of the 20 sets is the same.
    CHECK(torch::equal(std::get<1>(from_grid.sort()), std::get<1>(exact.sort())));
  }
}

TEST_CASE("DrawAbilityTable: each draw's row is GridAbilityPosterior's to the bit, whatever draws stand beside it; "
          "select follows a resampling",
          "[grid_ability_posterior]") {
  for (const auto& spec : {test::simulator_at({9, 9, 50, 50}, "2pl", 2, 0.2), test::simulator_at({6, 6, 50, 50}, "grm", 4, 0.2)}) {
    INFO(spec.model);
    const auto [data, params] = simulate(spec, 31, 30);  // 30 sets of item parameters [S, J, D]
    const auto model = models::make_item_response_model(spec);
    const inference::GridAbilityPosterior abilities(*model, data);
    const auto as_draws = params.transpose(0, 1).to(torch::kFloat32);  // [J, S, D], PosteriorDraws' layout
    inference::DrawAbilityTable table(abilities, as_draws);
    const auto params_f64 = as_draws.transpose(0, 1).to(torch::kFloat64);
    CHECK(torch::equal(table.posteriors(torch::arange(30)), abilities(params_f64)));
    CHECK(torch::equal(table.log_marginal_likelihood(), abilities.log_marginal_likelihood(params_f64)));
    // Draws 3, 17 and 3 again, computed alone: the same rows.
    const auto some = torch::tensor({3, 17, 3}, torch::kLong);
    CHECK(torch::equal(table.posteriors(some), abilities(params_f64.index_select(0, some))));
    // Resampled: the current draws are rows 5, 5, 29 and 0 of the table; then draw 2 of those, twice.
    const auto before = table.log_marginal_likelihood();
    table.select(torch::tensor({5, 5, 29, 0}, torch::kLong));
    CHECK(table.draws() == 4);
    CHECK(torch::equal(table.log_marginal_likelihood(), before.index_select(0, torch::tensor({5, 5, 29, 0}, torch::kLong))));
    CHECK(torch::equal(table.posteriors(torch::tensor({2, 2}, torch::kLong)),
                       abilities(params_f64.index_select(0, torch::tensor({29, 29}, torch::kLong)))));
  }
}
