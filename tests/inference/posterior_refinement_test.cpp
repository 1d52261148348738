#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"
#include "tests/inference/simulated_responses.hpp"
#include "inference/chain_diagnostics.hpp"
#include "inference/marginal_likelihood.hpp"
#include "inference/pareto_smoothed_importance.hpp"
#include "inference/posterior_refinement.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace bfhpo;

namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kFloat64);

// Person p's log integral of prod_j P(y_pj | theta) N(theta; 0, 1) over [-10, 10] by the trapezoid rule on
// 20,001 points, with the 2PL's or the GRM's response function written out here.
double person_log_likelihood_reference(const inference::ResponseMatrix& data, const torch::Tensor& params, int64_t p,
                                       bool graded) {
  constexpr int64_t kPoints = 20001;
  const double step = 20.0 / static_cast<double>(kPoints - 1);
  const auto y = data.responses.to(torch::kFloat64).contiguous();
  const auto m = data.mask.to(torch::kFloat64).contiguous();
  const auto q = params.to(torch::kFloat64).contiguous();
  const auto ya = y.accessor<double, 2>(), ma = m.accessor<double, 2>(), qa = q.accessor<double, 2>();
  const int64_t last = graded ? q.size(1) - 1 : 1;  // the highest category
  double total = 0.0;
  for (int64_t g = 0; g < kPoints; ++g) {
    const double theta = -10.0 + step * static_cast<double>(g);
    double log_value = -0.5 * theta * theta - 0.5 * std::log(2.0 * M_PI);
    for (int64_t j = 0; j < y.size(1); ++j) {
      if (ma[p][j] == 0.0) continue;
      const auto k = static_cast<int64_t>(ya[p][j]);
      const double a = std::exp(qa[j][0]);
      const auto at_least = [&](int64_t category) {
        if (category <= 0) return 1.0;
        if (category > last) return 0.0;
        return 1.0 / (1.0 + std::exp(-a * (theta - qa[j][category])));
      };
      log_value += std::log(at_least(k) - at_least(k + 1));
    }
    const double weight = (g == 0 || g == kPoints - 1) ? 0.5 : 1.0;
    total += weight * step * std::exp(log_value);
  }
  return std::log(total);
}

// Joint Gaussian proposals: per item N(mean_j, cov_j), as PosteriorDraws with each item's log q.
inference::PosteriorDraws gaussian_proposal(const torch::Tensor& mean, const torch::Tensor& covariance, int64_t n,
                                         uint64_t seed) {
  const int64_t items = mean.size(0), d = mean.size(1);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto factor = torch::linalg_cholesky(covariance);  // [J, D, D]
  const auto z = at::normal(0.0, 1.0, {items, n, d}, generator, kDouble);
  const auto draws = mean.unsqueeze(1) + torch::matmul(z, factor.transpose(1, 2));
  const auto log_det = factor.diagonal(0, 1, 2).log().sum(1);  // [J]
  const auto log_q = -0.5 * z.pow(2).sum(2) - log_det.unsqueeze(1) - 0.5 * static_cast<double>(d) * std::log(2.0 * M_PI);
  inference::PosteriorDraws out;
  for (int64_t j = 0; j < items; ++j) out.item_names.push_back("item" + std::to_string(j));
  out.draws = draws.to(torch::kFloat32);
  out.log_prob = log_q.to(torch::kFloat32);
  return out;
}

// n draws of every item's parameters from the model's prior, with log q 0: chains' starting points.
inference::PosteriorDraws prior_draws_of(const models::ItemResponseModel& model, const inference::ResponseMatrix& data,
                                         int64_t n, uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto items = static_cast<int64_t>(data.item_names.size());
  inference::PosteriorDraws draws;
  draws.item_names = data.item_names;
  draws.draws = model.draw_item_params(n, items, generator).transpose(0, 1).contiguous();
  draws.log_prob = torch::zeros({items, n}, torch::kFloat32);
  return draws;
}

// Mean and sd of every item parameter of draws [J, n, D]: [J, D] each.
std::pair<torch::Tensor, torch::Tensor> moments(const torch::Tensor& draws) {
  const auto d = draws.to(torch::kFloat64);
  return {d.mean(1), d.std(1)};
}

// The chains' posterior (mcmc from `starts` prior draws of seed `seed`), checked converged (R-hat < 1.05).
inference::Refinement converged_chains(const models::ItemResponseModel& model, const inference::ResponseMatrix& data,
                                       int64_t starts, uint64_t seed, int64_t warmup_sweeps = 500,
                                       int64_t sampling_sweeps = 1500) {
  inference::RefinementOptions options;
  options.method = "mcmc";
  options.warmup_sweeps = warmup_sweeps;
  options.sampling_sweeps = sampling_sweeps;
  auto chains = inference::refine_posterior(model, data, prior_draws_of(model, data, starts, seed), options);
  REQUIRE(chains.max_rhat < 1.05);
  return chains;
}

}  // namespace

TEST_CASE("the marginal likelihood equals a fine quadrature of every person's ability integral",
          "[trials][refinement]") {
  for (const bool graded : {false, true}) {
    const auto spec = graded ? test::simulator_at({4, 4, 30, 30}, "grm", 4, 0.1) : test::simulator_at({5, 5, 30, 30}, "2pl", 2, 0.1);
    const auto model = models::make_item_response_model(spec);
    torch::Tensor truth;
    const auto data = test::simulated_responses(spec, graded ? 4 : 5, 30, graded ? 7 : 3, &truth);
    const inference::MarginalLikelihood likelihood(*model, data);
    double reference = 0.0;
    for (int64_t p = 0; p < 30; ++p) reference += person_log_likelihood_reference(data, truth, p, graded);
    // The grid's error per person is its N(0, 1) mass beyond +-6 relative to the integral (< 1e-7 here, items
    // of a <= e^1.5) and the trapezoid's (far smaller); the reference's own error is below 1e-12.
    CHECK(likelihood.log_likelihood(truth.unsqueeze(0)).item<double>() == Approx(reference).epsilon(0).margin(30 * 1e-6));
  }
}

TEST_CASE("an item changed in a person-grid table equals the table computed with the new item from scratch",
          "[trials][refinement]") {
  const auto spec = test::simulator_at({6, 6, 80, 80}, "grm", 4, 0.15);
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 6, 80, 12);
  const inference::MarginalLikelihood likelihood(*model, data);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(13);
  const auto params = model->draw_item_params(3, 6, generator).to(torch::kFloat64);  // three sets
  auto changed = params.clone();
  changed.select(1, 2).copy_(model->draw_item_params(3, 1, generator).to(torch::kFloat64).select(1, 0));
  auto table = likelihood.table(params);
  const auto direct = likelihood.log_likelihood(changed);
  // Scored: each set's move of item 2 (its category probabilities times the ratio), the table untouched.
  const auto ratio = (likelihood.category_grid(changed.select(1, 2)) / likelihood.category_grid(params.select(1, 2))).contiguous();
  const int64_t ratio_size = ratio.size(1) * ratio.size(2);
  std::vector<std::vector<double>> marginals(3, std::vector<double>(80));
  for (int64_t s = 0; s < 3; ++s) {
    const double moved =
        likelihood.moved_log_likelihood(table, s, 2, ratio.data_ptr<double>() + s * ratio_size, marginals[s].data());
    CHECK(moved == Approx(direct[s].item<double>()).epsilon(1e-12));
  }
  CHECK(torch::allclose(inference::MarginalLikelihood::log_likelihood(table), likelihood.log_likelihood(params), 1e-10, 1e-9));
  // Made in sets 0 and 2 only: those hold the changed params, set 1 the old ones.
  likelihood.move(table, 0, 2, ratio.data_ptr<double>(), marginals[0].data());
  likelihood.move(table, 2, 2, ratio.data_ptr<double>() + 2 * ratio_size, marginals[2].data());
  const auto after = inference::MarginalLikelihood::log_likelihood(table);
  CHECK(after[0].item<double>() == Approx(direct[0].item<double>()).epsilon(1e-12));
  CHECK(after[2].item<double>() == Approx(direct[2].item<double>()).epsilon(1e-12));
  CHECK(after[1].item<double>() == Approx(likelihood.log_likelihood(params)[1].item<double>()).epsilon(1e-12));
  const auto fresh = likelihood.table(changed);
  CHECK(torch::allclose(table.scaled[0] * table.log_scale[0].exp().unsqueeze(1),
                        fresh.scaled[0] * fresh.log_scale[0].exp().unsqueeze(1), 1e-10, 1e-300));

  // One set's table against the three changes (an item's draws judged alone: one product).
  const auto one_set = likelihood.table(params.narrow(0, 0, 1));
  const auto from_one = likelihood.changed_item_log_likelihood(one_set, 2, params[0][2], changed.select(1, 2));
  auto one_changed = params.narrow(0, 0, 1).expand({3, -1, -1}).clone();
  one_changed.select(1, 2).copy_(changed.select(1, 2));
  // In float32: each of the 80 persons' log integrals within G 2^-24 of the double one.
  CHECK(torch::allclose(from_one, likelihood.log_likelihood(one_changed), 0.0,
                        80.0 * inference::kAbilityGridPoints * std::ldexp(1.0, -24)));
  CHECK_FALSE(torch::allclose(from_one, likelihood.log_likelihood(params.narrow(0, 0, 1)).expand({3}), 0.0, 1e-3));
}

TEST_CASE("the likelihood of rescaled abilities from the table equals it computed from scratch",
          "[trials][refinement]") {
  const auto spec = test::simulator_at({5, 5, 70, 70}, "2pl", 2, 0.1);
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 5, 70, 14);
  const inference::MarginalLikelihood likelihood(*model, data);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(15);
  const auto params = model->draw_item_params(3, 5, generator).to(torch::kFloat64);
  // Moves of the sampler's size (its steps adapt to the posterior's sd of the abilities' location and scale,
  // a few hundredths): the moved grid still reaches beyond +-5.6.
  const auto location = torch::tensor({0.1, -0.1, 0.0}, torch::kFloat64);
  const auto log_scale = torch::tensor({0.0, 0.05, -0.05}, torch::kFloat64);
  const auto table = likelihood.table(params);
  // Two quadratures of one integral: they differ by the N(0, 1) mass the moved grid no longer reaches
  // (beyond 5.6: 1e-8) relative to a person's integral, at most ~5e-7 for a person who answered every item
  // right (whose integral is the mass above ~2), so below 70 x 1e-6 for the 70 persons (1e-5 measured).
  const auto from_table = likelihood.rescaled_log_likelihood(table, location, log_scale);
  const auto direct = likelihood.log_likelihood(model->rescale_abilities(params, location, log_scale));
  CHECK((from_table - direct).abs().max().item<double>() < 70 * 1e-6);
}

TEST_CASE("the generalized Pareto shape is recovered from its draws", "[trials][refinement]") {
  std::mt19937_64 engine(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (const double shape : {0.2, 0.5, 0.9}) {
    std::vector<double> x;
    for (int i = 0; i < 4000; ++i) x.push_back(std::expm1(-shape * std::log1p(-uniform(engine))) / shape * 2.0);
    double scale = 0.0;
    // The estimate's sd at 4,000 draws is about (1 + k) / sqrt(4000) < 0.03: 0.1 is over 3 sd.
    CHECK(inference::generalized_pareto_shape(x, &scale) == Approx(shape).margin(0.1));
    CHECK(scale == Approx(2.0).epsilon(0.15));
  }
}

TEST_CASE("Pareto k-hat tells a proposal that covers the target from one that misses its tails",
          "[trials][refinement]") {
  std::mt19937_64 engine(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto log_ratios = [&](double proposal_sd) {
    std::vector<double> out;
    for (int i = 0; i < 4000; ++i) {
      const double x = proposal_sd * normal(engine);
      out.push_back(-0.5 * x * x + 0.5 * x * x / (proposal_sd * proposal_sd) + std::log(proposal_sd));
    }
    return out;
  };
  // Target N(0, 1), proposal N(0, s^2): for s < 1 the ratios' tail has shape 1 - s^2 (0.75 at s = 0.5);
  // for s > 1 they are bounded.
  const auto narrow = inference::pareto_smooth(log_ratios(0.5));
  CHECK(narrow.pareto_k == Approx(0.75).margin(0.12));
  CHECK_FALSE(narrow.reliable());
  const auto wide = inference::pareto_smooth(log_ratios(1.5));
  CHECK(wide.pareto_k < 0.3);
  CHECK(wide.reliable());
  // Smoothed, normalised weights; ESS of a 1.5x proposal: S / (s^2 / sqrt(2 s^2 - 1)) = 0.83 S.
  double sum = 0.0;
  for (double w : wide.weights) sum += w;
  CHECK(sum == Approx(1.0).margin(1e-12));
  CHECK(wide.effective_sample_size / 4000.0 == Approx(0.83).margin(0.06));
}

TEST_CASE("systematic resampling keeps each draw floor or ceil of n times its weight", "[trials][refinement]") {
  const std::vector<double> weights{0.1, 0.45, 0.0, 0.3, 0.15};
  const auto indices = inference::systematic_resample(weights, 40, 0.37);
  REQUIRE(indices.size() == 40);
  for (size_t i = 0; i < weights.size(); ++i) {
    const auto count = std::count(indices.begin(), indices.end(), static_cast<int64_t>(i));
    CHECK(std::abs(static_cast<double>(count) - 40.0 * weights[i]) < 1.0);
  }
}

TEST_CASE("split R-hat and ESS: independent chains near 1 and their draws, stuck chains far from them",
          "[trials][refinement]") {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(3);
  const auto independent = at::normal(0.0, 1.0, {4, 500, 2}, generator, kDouble);
  CHECK(inference::split_rhat(independent).max().item<double>() < 1.02);
  // Independent draws: ESS about the number of draws (2,000), within its sampling noise.
  CHECK(inference::effective_sample_size(independent).min().item<double>() > 1500.0);
  const auto offsets = torch::tensor({0.0, 0.0, 3.0, 3.0}, kDouble).reshape({4, 1, 1});
  CHECK(inference::split_rhat(independent + offsets).min().item<double>() > 1.5);
  // A random walk: strongly autocorrelated, a small ESS.
  const auto walk = at::normal(0.0, 0.1, {4, 500, 1}, generator, kDouble).cumsum(1);
  CHECK(inference::effective_sample_size(walk).item<double>() < 100.0);
}

TEST_CASE("refinement recovers the exact posterior of a Rasch test from a proposal that is off",
          "[trials][refinement]") {
  const auto spec = test::simulator_at({2, 2, 60, 60}, "rasch");
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 2, 60, 21);
  const inference::MarginalLikelihood likelihood(*model, data);
  // The exact posterior of (b1, b2) on an 81 x 81 grid over [-4, 4]^2: posterior sds near 0.3 are 3 steps of
  // it, where the trapezoid rule's error on the moments is far below the draws' Monte Carlo error.
  const auto axis = torch::linspace(-4.0, 4.0, 81, kDouble);
  const auto grid = torch::stack(torch::meshgrid({axis, axis}, "ij"), -1).reshape({-1, 2, 1});
  const auto log_posterior = model->log_prior(grid).sum(1) + likelihood.log_likelihood(grid);
  const auto weight = torch::softmax(log_posterior, 0).unsqueeze(1);  // [N, 1]
  const auto points = grid.squeeze(-1);
  const auto exact_mean = (weight * points).sum(0);
  const auto exact_sd = (weight * (points - exact_mean).pow(2)).sum(0).sqrt();
  const auto mean = exact_mean.unsqueeze(1), sd = exact_sd.unsqueeze(1);  // [J, D]

  const auto check_recovered = [&](const inference::Refinement& refined) {
    const auto [m, s] = moments(refined.posterior.draws);
    // 1,000 kept draws of ESS >= ~400: the mean's error is below 0.05 sd, the sd's below 4%; 4 sd of each.
    CHECK(((m - mean) / sd).abs().max().item<double>() < 0.2);
    CHECK((s / sd - 1.0).abs().max().item<double>() < 0.15);
  };
  // A proposal 3 sd off and too narrow: importance is unreliable, auto runs mcmc.
  const auto off = gaussian_proposal(mean + 3.0 * sd, (0.6 * sd).pow(2).unsqueeze(-1), 1000, 4);
  inference::RefinementOptions options;
  options.method = "importance";
  const auto importance = inference::refine_posterior(*model, data, off, options);
  CHECK_FALSE(importance.importance_reliable);
  CHECK(importance.method == "amortized");
  CHECK(importance.warning());
  CHECK(importance.posterior.draws.equal(off.draws));
  options.method = "auto";
  const auto refined = inference::refine_posterior(*model, data, off, options);
  CHECK(refined.method == "mcmc");
  CHECK(refined.max_rhat < 1.05);
  CHECK(refined.min_ess > 300.0);
  check_recovered(refined);
  // A proposal half a posterior sd off and wider: importance is reliable, its intervals would cover points
  // fewer or more than stated, so it reweights them.
  const auto wide = gaussian_proposal(mean + 0.5 * sd, (1.3 * sd).pow(2).unsqueeze(-1), 1000, 5);
  const auto reweighted = inference::refine_posterior(*model, data, wide, options);
  CHECK(reweighted.importance_reliable);
  CHECK(reweighted.method == "importance");
  REQUIRE(reweighted.items);
  CHECK(reweighted.items->largest_coverage_loss > inference::kMostItemCoverageLoss);
  CHECK_FALSE(reweighted.warning());
  check_recovered(reweighted);
  // A proposal at the exact posterior's moments: the weights confirm it and its draws stand untouched
  // (resampling would only add their Monte Carlo error).
  const auto close = gaussian_proposal(mean, sd.pow(2).unsqueeze(-1), 1000, 6);
  const auto confirmed = inference::refine_posterior(*model, data, close, options);
  CHECK(confirmed.importance_reliable);
  CHECK(confirmed.method == "amortized");
  CHECK(confirmed.reliable());
  CHECK_FALSE(confirmed.warning());
  CHECK(confirmed.posterior.draws.equal(close.draws));
  CHECK_THAT(confirmed.line(), Catch::Contains("the amortized draws stand"));
  CHECK(confirmed.to_json()["items_stand"] == true);
}

TEST_CASE("the chains stop at the first check where R-hat and the ESS are met, with a fixed run's draws",
          "[trials][refinement]") {
  const auto spec = test::simulator_at({3, 3, 80, 80}, "rasch");
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 3, 80, 23);
  const auto start = prior_draws_of(*model, data, 400, 24);
  inference::RefinementOptions options;
  options.method = "mcmc";
  options.warmup_sweeps = 100;
  options.sampling_sweeps = 4000;
  const auto stopped = inference::refine_posterior(*model, data, start, options);
  CHECK(stopped.max_rhat <= 1.01);
  CHECK(stopped.min_ess >= 400.0);
  CHECK(stopped.sampling_sweeps < options.sampling_sweeps);
  CHECK(stopped.sampling_sweeps % 100 == 0);
  CHECK_THAT(stopped.line(), Catch::Contains("(" + std::to_string(stopped.sampling_sweeps) + " sampling sweeps a chain)"));
  CHECK(stopped.to_json()["sampling_sweeps"] == stopped.sampling_sweeps);

  // Every sweep of a run as long: the same draws and diagnostics.
  options.until_converged = false;
  options.sampling_sweeps = stopped.sampling_sweeps;
  const auto fixed = inference::refine_posterior(*model, data, start, options);
  CHECK(fixed.sampling_sweeps == stopped.sampling_sweeps);
  CHECK(fixed.posterior.draws.equal(stopped.posterior.draws));
  CHECK(fixed.max_rhat == stopped.max_rhat);
  CHECK(fixed.min_ess == stopped.min_ess);
  // One check earlier the criteria were not met.
  REQUIRE(stopped.sampling_sweeps > 100);
  options.sampling_sweeps = stopped.sampling_sweeps - 100;
  const auto shorter = inference::refine_posterior(*model, data, start, options);
  CHECK_FALSE((shorter.max_rhat <= 1.01 && shorter.min_ess >= 400.0));
}

TEST_CASE("mcmc from a poor start and importance from a good proposal agree on a graded test",
          "[trials][refinement]") {
  // Two algorithms, one target: the GRM's exact posterior (ordered thresholds: a prior with support).
  const auto spec = test::simulator_at({3, 3, 120, 120}, "grm", 3);
  const auto model = models::make_item_response_model(spec);
  torch::Tensor truth;
  const auto data = test::simulated_responses(spec, 3, 120, 8, &truth);
  inference::RefinementOptions options;
  options.method = "mcmc";
  const auto mcmc = inference::refine_posterior(*model, data, prior_draws_of(*model, data, 1000, 9), options);
  CHECK(mcmc.max_rhat < 1.05);
  const auto [m, s] = moments(mcmc.posterior.draws);
  const auto draws = mcmc.posterior.draws.to(torch::kFloat64);
  const auto centred = draws - draws.mean(1, true);
  const auto covariance = torch::matmul(centred.transpose(1, 2), centred) / 999.0;
  const auto proposal = gaussian_proposal(m, 1.44 * covariance, 2000, 10);
  options.method = "importance";
  const auto importance = inference::refine_posterior(*model, data, proposal, options);
  REQUIRE(importance.importance_reliable);
  const auto [mi, si] = moments(importance.posterior.draws);
  // Each side's mean error is below 0.06 sd (ESS >= 300): 0.25 sd is about 3 sd of their difference.
  CHECK(((mi - m) / s).abs().max().item<double>() < 0.25);
  CHECK((si / s - 1.0).abs().max().item<double>() < 0.2);
  // And both near the truth the data came from (120 persons: a few posterior sds at most).
  CHECK(((m - truth) / s).abs().max().item<double>() < 4.0);
}

TEST_CASE("many items each right: the joint weights fail, every item judged alone stands; one item off is named",
          "[trials][refinement]") {
  // 30 Rasch items, 150 persons: each item's posterior from chains, and a proposal of independent normals with
  // those means and sds. Every item is right, but the items' posterior correlations (the persons' common
  // location) are not in it, and the joint k-hat is above its threshold at 200 draws.
  const auto spec = test::simulator_at({20, 20, 150, 150}, "rasch");
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 20, 150, 31);
  const auto chains = converged_chains(*model, data, 200, 33, 200, 400);
  const auto [mean, sd] = moments(chains.posterior.draws);

  inference::RefinementOptions options;
  options.method = "auto";
  const auto right = gaussian_proposal(mean, sd.pow(2).unsqueeze(-1), 200, 37);
  const auto judged = inference::refine_posterior(*model, data, right, options);
  INFO("joint k-hat " << judged.pareto_k << ", threshold " << judged.pareto_k_threshold << "; chains' R-hat "
                      << chains.max_rhat << ", ESS " << chains.min_ess);
  REQUIRE_FALSE(judged.importance_reliable);
  REQUIRE(judged.items);
  CHECK(judged.items->stands);
  CHECK(judged.reliable());
  CHECK(judged.method == "amortized");  // auto ran no chains: the amortized draws stand
  CHECK(judged.posterior.draws.equal(right.draws));
  CHECK_FALSE(judged.warning());
  CHECK_THAT(judged.line(), Catch::Contains("the amortized draws stand"));

  // Item 7 one posterior sd off and too narrow (0.7 sd): its 50% interval would cover about 34%, not 50.
  auto shifted_mean = mean.clone(), narrowed_sd = sd.clone();
  shifted_mean[7] += sd[7];
  narrowed_sd[7] *= 0.7;
  options.method = "importance";
  const auto off = gaussian_proposal(shifted_mean, narrowed_sd.pow(2).unsqueeze(-1), 200, 37);
  const auto distrusted = inference::refine_posterior(*model, data, off, options);
  REQUIRE(distrusted.items);
  CHECK_FALSE(distrusted.items->stands);
  CHECK(distrusted.items->worst_item == "item7");
  CHECK(distrusted.items->largest_coverage_loss > 0.04);
  CHECK_FALSE(distrusted.reliable());
  REQUIRE(distrusted.warning());
  CHECK_THAT(*distrusted.warning(), Catch::Contains("item 'item7'"));
  // Every other item as before: the judgement of the first draws set stands below the limit.
  CHECK(judged.items->largest_coverage_loss <= inference::kMostItemCoverageLoss);
}

TEST_CASE("refinement options: bad ones are user errors", "[trials][refinement]") {
  inference::RefinementOptions options;
  options.method = "nuts";
  CHECK_THROWS_AS(inference::check_refinement_options(options, 1000, "test"), UserError);
  options.method = "mcmc";
  options.chains = 1;
  CHECK_THROWS_AS(inference::check_refinement_options(options, 1000, "test"), UserError);
  options.chains = 4;
  options.sampling_sweeps = 5;
  CHECK_THROWS_AS(inference::check_refinement_options(options, 1000, "test"), UserError);
}

TEST_CASE("refinement options: more chains than draws, too few draws to smooth, sweeps past the most",
          "[trials][refinement]") {
  using Catch::Contains;
  inference::RefinementOptions options{"mcmc", 4, 500, 1500, 1};
  CHECK_NOTHROW(inference::check_refinement_options(options, 4, "test"));
  CHECK_THROWS_WITH(inference::check_refinement_options(options, 3, "test"),
                    Contains("4 chains from 3 amortized draws") && Contains("Fix: give --refine-chains 3"));
  options.method = "importance";  // runs no chains
  CHECK_NOTHROW(inference::check_refinement_options(options, 30, "test"));
  options.chains = 40;
  CHECK_NOTHROW(inference::check_refinement_options(options, 30, "test"));
  options.method = "auto";
  CHECK_THROWS_WITH(inference::check_refinement_options(options, 30, "test"), Contains("40 chains from 30"));
  options.chains = 4;
  for (const char* method : {"importance", "auto"}) {
    options.method = method;
    CHECK_NOTHROW(inference::check_refinement_options(options, inference::kFewestSmoothedDraws, "test"));
    CHECK_THROWS_WITH(inference::check_refinement_options(options, inference::kFewestSmoothedDraws - 1, "test"),
                      Contains("importance sampling of 20 draws") && Contains("at least 21"));
  }
  options.method = "mcmc";
  options.warmup_sweeps = std::numeric_limits<int64_t>::max();  // plus the sampling sweeps: past int64
  CHECK_THROWS_WITH(inference::check_refinement_options(options, 1000, "test"), Contains("at most 10000000 together"));
  options.warmup_sweeps = inference::kMostSweeps - options.sampling_sweeps;
  CHECK_NOTHROW(inference::check_refinement_options(options, 1000, "test"));
  options.warmup_sweeps += 1;
  CHECK_THROWS_AS(inference::check_refinement_options(options, 1000, "test"), UserError);
}

TEST_CASE("Pareto smoothing: the k-hat threshold of S draws, stated in the refinement's line and warning",
          "[trials][refinement]") {
  CHECK(inference::pareto_k_threshold(100) == Approx(0.5));
  CHECK(inference::pareto_k_threshold(1000) == Approx(2.0 / 3.0));
  CHECK(inference::pareto_k_threshold(100000) == Approx(0.7));
  CHECK_THROWS_AS(inference::pareto_smooth(std::vector<double>(inference::kFewestSmoothedDraws - 1, 0.0)),
                  std::invalid_argument);
  // The fewest draws smooth a tail of 5 (ceil(0.2 x 21)) without an error.
  std::vector<double> ratios;
  for (int64_t s = 0; s < inference::kFewestSmoothedDraws; ++s) ratios.push_back(0.1 * static_cast<double>(s * s % 7));
  CHECK_NOTHROW(inference::pareto_smooth(ratios));

  inference::Refinement refinement;
  refinement.method = "amortized";
  refinement.pareto_k = 0.6;
  refinement.pareto_k_threshold = inference::pareto_k_threshold(100);
  refinement.importance_ess = 30;
  refinement.importance_reliable = false;
  refinement.max_rhat = refinement.min_ess = refinement.acceptance = std::numeric_limits<double>::quiet_NaN();
  refinement.posterior.draws = torch::zeros({3, 100, 2});
  CHECK_THAT(refinement.line(), Catch::Contains("Pareto k-hat 0.6 ") && Catch::Contains("unreliable, k-hat not below 0.5)"));
  CHECK_THAT(refinement.line(), !Catch::Contains("0.7"));
  REQUIRE(refinement.warning());
  CHECK_THAT(*refinement.warning(), Catch::Contains("k-hat 0.6 >= 0.5, the threshold at 100 draws") &&
                                        !Catch::Contains("0.7"));
  CHECK(refinement.to_json()["pareto_k_threshold"] == 0.5);
  // k-hat below its threshold but too few effective draws: that is what the line and the warning name.
  refinement.pareto_k = 0.4;
  CHECK_THAT(refinement.line(), Catch::Contains("(importance ESS 30; unreliable, ESS below 100)"));
  REQUIRE(refinement.warning());
  CHECK_THAT(*refinement.warning(), Catch::Contains("importance ESS 30 < 100 of 100 draws") && !Catch::Contains(">= 0.5"));
}

TEST_CASE("importance weights of k-hat below the threshold but an ESS under 100 are not reliable: the items are "
          "judged alone",
          "[trials][refinement]") {
  // A Rasch test of 2 items and a normal proposal 0.8 posterior sd off in each, 150 draws: k-hat can pass
  // while few draws carry the weight.
  const auto spec = test::simulator_at({2, 2, 60, 60}, "rasch");
  const auto model = models::make_item_response_model(spec);
  const auto data = test::simulated_responses(spec, 2, 60, 21);
  const auto [mean, sd] = moments(converged_chains(*model, data, 1000, 9).posterior.draws);
  inference::RefinementOptions options;
  options.method = "importance";
  bool seen_low_ess = false;
  for (uint64_t seed = 40; seed < 60 && !seen_low_ess; ++seed) {
    const auto proposal = gaussian_proposal(mean + 0.8 * sd, sd.pow(2).unsqueeze(-1), 150, seed);
    const auto refined = inference::refine_posterior(*model, data, proposal, options);
    INFO("k-hat " << refined.pareto_k << " of threshold " << refined.pareto_k_threshold << ", ESS " << refined.importance_ess);
    CHECK(refined.importance_reliable ==
          (refined.pareto_k < refined.pareto_k_threshold && refined.importance_ess >= inference::kFewestEffectiveDraws));
    if (refined.pareto_k < refined.pareto_k_threshold && refined.importance_ess < inference::kFewestEffectiveDraws) {
      seen_low_ess = true;
      CHECK(refined.method == "amortized");
      CHECK(refined.items);  // judged alone
    }
  }
  CHECK(seen_low_ess);
}
