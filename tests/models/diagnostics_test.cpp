#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "models/diagnostics.hpp"

namespace bm = bfhpo::models;

namespace {

torch::Tensor f64(std::vector<double> values, torch::IntArrayRef shape) {
  return torch::tensor(values, torch::kFloat64).reshape(shape);
}

double value_at(const torch::Tensor& x, int64_t i) { return x[i].item<double>(); }

// Unbiased std over datasets (Tensor::std(0) would pick the std(bool) overload).
torch::Tensor std_over_datasets(const torch::Tensor& x) {
  return ((x - x.mean(0, true)).pow(2).sum(0) / static_cast<double>(x.size(0) - 1)).sqrt();
}

// numpy.median of a 1-D tensor.
double numpy_median(const torch::Tensor& x) {
  auto sorted = std::get<0>(x.sort());
  const int64_t n = x.numel();
  return n % 2 ? value_at(sorted, n / 2) : (value_at(sorted, n / 2 - 1) + value_at(sorted, n / 2)) / 2.0;
}

// N datasets whose posterior centre m ~ N(0, 1); truth = m + sigma * eps and
// S draws m + scale * sigma * xi. scale == 1 is a perfectly calibrated
// posterior; scale < 1 an over-confident one.
struct Synthetic {
  torch::Tensor draws;   // [N, S, D]
  torch::Tensor truths;  // [N, D]
};

Synthetic gaussian_posteriors(int64_t n, int64_t s, int64_t d, double sigma, double scale,
                              uint64_t seed) {
  torch::manual_seed(seed);
  auto centre = torch::randn({n, d}, torch::kFloat64);
  auto truths = centre + sigma * torch::randn({n, d}, torch::kFloat64);
  auto draws = centre.unsqueeze(1) + scale * sigma * torch::randn({n, s, d}, torch::kFloat64);
  return {draws, truths};
}

// Coverage of the central a-interval of N(m, (c sigma)^2) for truths from
// N(m, sigma^2): P(|Z| <= c sqrt(2) erfinv(a)) = erf(c erfinv(a)).
torch::Tensor gaussian_coverage(const torch::Tensor& levels, double scale) {
  return torch::erf(scale * torch::erfinv(levels));
}

}  // namespace

TEST_CASE("diagnostics: hand-computed fractional ranks and KS distance", "[diagnostics]") {
  // One dimension, draws {1, 2, 3, 4} for every dataset.
  auto draws = f64({1, 2, 3, 4}, {1, 4, 1}).expand({4, 4, 1});
  auto truths = f64({2.5, 0, 5, 2}, {4, 1});
  auto ranks = bm::sbc_ranks(draws, truths);
  REQUIRE(ranks.sizes() == torch::IntArrayRef({4, 1}));
  CHECK(ranks[0][0].item<double>() == 0.5);
  CHECK(ranks[1][0].item<double>() == 0.0);
  CHECK(ranks[2][0].item<double>() == 1.0);
  CHECK(ranks[3][0].item<double>() == 0.25);  // the draw equal to the truth is not below

  // Sorted ranks 0.1, 0.4, 0.9: max(1/3 - 0.1, 2/3 - 0.4, 1 - 0.9, 0.1, 0.4 - 1/3, 0.9 - 2/3).
  auto ks = bm::rank_ks_distance(f64({0.9, 0.5, 0.1, 1.0, 0.4, 0.9}, {3, 2}));
  CHECK(value_at(ks, 0) == Approx(2.0 / 3.0 - 0.4));
  // Sorted 0.5, 0.9, 1: the ECDF lags, max(0.5, 0.9 - 1/3, 1 - 2/3) from below.
  CHECK(value_at(ks, 1) == Approx(0.9 - 1.0 / 3.0));
}

TEST_CASE("diagnostics: hand-computed coverage and median calibration error", "[diagnostics]") {
  // Draws {0, 1, 2, 3, 4} in both datasets, truths 2 and 3.5. Linear-interpolated
  // quantiles: a = 0.2 -> [1.6, 2.4], a = 0.5 -> [1, 3], a = 0.8 -> [0.4, 3.6],
  // a = 0.9 -> [0.2, 3.8]. Coverage 0.5, 0.5, 1, 1; errors 0.3, 0, 0.2, 0.1.
  auto draws = f64({0, 4, 2, 1, 3}, {1, 5, 1}).expand({2, 5, 1});
  auto truths = f64({2, 3.5}, {2, 1});
  auto levels = f64({0.2, 0.5, 0.8, 0.9}, {4});
  auto coverage = bm::central_interval_coverage(draws, truths, levels);
  REQUIRE(coverage.sizes() == torch::IntArrayRef({4, 1}));
  CHECK(coverage[0][0].item<double>() == 0.5);
  CHECK(coverage[1][0].item<double>() == 0.5);
  CHECK(coverage[2][0].item<double>() == 1.0);
  CHECK(coverage[3][0].item<double>() == 1.0);
  // Even number of levels: the mean of the two middle errors 0.1 and 0.2.
  CHECK(value_at(bm::calibration_error(draws, truths, levels), 0) == Approx(0.15));
  // Odd: the middle one of 0.3, 0, 0.2.
  CHECK(value_at(bm::calibration_error(draws, truths, levels.slice(0, 0, 3)), 0) == Approx(0.2));
  // An interval end equal to the truth counts as inside (a = 0.5, truth 3).
  auto on_edge = bm::central_interval_coverage(draws, f64({3, 1}, {2, 1}), levels.slice(0, 1, 2));
  CHECK(on_edge[0][0].item<double>() == 1.0);
}

TEST_CASE("diagnostics: default calibration levels are BayesFlow's", "[diagnostics]") {
  auto levels = bm::calibration_levels();
  REQUIRE(levels.numel() == 20);
  CHECK(value_at(levels, 0) == Approx(0.005));
  CHECK(value_at(levels, 19) == Approx(0.995));
  CHECK(value_at(levels, 1) - value_at(levels, 0) == Approx(0.99 / 19));
  CHECK_THROWS_AS(bm::calibration_levels(10, 0.0, 0.9), std::invalid_argument);
  CHECK_THROWS_AS(bm::calibration_levels(10, 0.5, 1.0), std::invalid_argument);
}

TEST_CASE("diagnostics: hand-computed recovery, contraction and z-scores", "[diagnostics]") {
  // Posterior means 1, 2, 3 (draws mean -+ 1, variance 2), truths 1, 2, 4.
  auto means = f64({1, 2, 3}, {3, 1, 1});
  auto draws = torch::cat({means - 1.0, means + 1.0}, 1);
  auto truths = f64({1, 2, 4}, {3, 1});
  // Deviations (-1, 0, 1) and (-4/3, -1/3, 5/3): r = 3 / sqrt(2 * 42/9).
  CHECK(value_at(bm::posterior_mean_correlation(draws, truths), 0) == Approx(9.0 / std::sqrt(84.0)));
  // Errors 0, 0, 1 over the range 3.
  CHECK(value_at(bm::normalized_rmse(draws, truths), 0) == Approx(std::sqrt(1.0 / 3.0) / 3.0));
  // 1 - 2/4.
  CHECK(value_at(bm::posterior_contraction(draws, f64({4}, {1})), 0) == Approx(0.5));
  // z = (0, 0, -1/sqrt 2).
  auto z = bm::posterior_z_scores(draws, truths);
  CHECK(z[0][0].item<double>() == 0.0);
  CHECK(z[2][0].item<double>() == Approx(-1.0 / std::sqrt(2.0)));

  // Contraction averages over datasets: variances 2 and 8 against 16.
  auto spread = f64({-1, 1, -2, 2}, {2, 2, 1});
  CHECK(value_at(bm::posterior_contraction(spread, f64({16}, {1})), 0) ==
        Approx((0.875 + 0.5) / 2.0));
}

TEST_CASE("diagnostics: calibrated Gaussian posteriors give small error and uniform ranks",
          "[diagnostics]") {
  const int64_t n = 2000, s = 200;
  auto syn = gaussian_posteriors(n, s, 2, 0.7, 1.0, 11);
  auto levels = bm::calibration_levels();
  // Each coverage is a binomial proportion (sd <= 0.5 / sqrt N) off by O(1/S)
  // from the finite number of draws.
  const double binomial_sd = 0.5 / std::sqrt(static_cast<double>(n));
  const double bound = 4.0 * binomial_sd + 2.0 / s;
  auto coverage = bm::central_interval_coverage(syn.draws, syn.truths, levels);
  CHECK((coverage - levels.unsqueeze(1)).abs().max().item<double>() < bound);
  auto error = bm::calibration_error(syn.draws, syn.truths, levels);
  CHECK(error.max().item<double>() < 3.0 * binomial_sd + 2.0 / s);

  // 1.63 / sqrt(N) is the KS test's 1% critical value; discrete ranks add 1/(S+1).
  auto ks = bm::rank_ks_distance(bm::sbc_ranks(syn.draws, syn.truths));
  CHECK(ks.max().item<double>() < 1.63 / std::sqrt(static_cast<double>(n)) + 1.0 / (s + 1));

  auto z = bm::posterior_z_scores(syn.draws, syn.truths);
  CHECK(z.mean(0).abs().max().item<double>() < 4.0 / std::sqrt(static_cast<double>(n)));
  CHECK(((std_over_datasets(z) - 1.0).abs().max().item<double>()) < 0.08);
}

TEST_CASE("diagnostics: coverage of mis-scaled posteriors follows erf(c erfinv(a))",
          "[diagnostics]") {
  const int64_t n = 2000, s = 500;
  const double scale = GENERATE(0.5, 2.0);
  auto syn = gaussian_posteriors(n, s, 2, 1.3, scale, 23);
  // Central levels only: the tails of S draws estimate extreme quantiles poorly.
  auto levels = bm::calibration_levels(9, 0.1, 0.9);
  auto coverage = bm::central_interval_coverage(syn.draws, syn.truths, levels);
  auto expected = gaussian_coverage(levels, scale).unsqueeze(1);
  const double tolerance = 4.0 * 0.5 / std::sqrt(static_cast<double>(n)) + 0.01;
  CHECK((coverage - expected).abs().max().item<double>() < tolerance);

  // z-scores spread 1 / c: over-confidence shows as a std above 1.
  auto z_std = std_over_datasets(bm::posterior_z_scores(syn.draws, syn.truths));
  CHECK(z_std.sub(1.0 / scale).abs().max().item<double>() < 0.1 / scale);
}

TEST_CASE("diagnostics: over-confident posteriors give a large calibration error",
          "[diagnostics]") {
  const int64_t n = 2000, s = 500;
  auto syn = gaussian_posteriors(n, s, 2, 1.0, 0.5, 31);
  auto levels = bm::calibration_levels();
  const double expected = numpy_median((gaussian_coverage(levels, 0.5) - levels).abs());
  REQUIRE(expected > 0.15);
  auto error = bm::calibration_error(syn.draws, syn.truths, levels);
  CHECK(error.sub(expected).abs().max().item<double>() <
        4.0 * 0.5 / std::sqrt(static_cast<double>(n)) + 0.01);
  auto ks = bm::rank_ks_distance(bm::sbc_ranks(syn.draws, syn.truths));
  CHECK(ks.min().item<double>() > 0.1);
}

TEST_CASE("diagnostics: exact posterior means recover perfectly, a bias shows in NRMSE only",
          "[diagnostics]") {
  torch::manual_seed(5);
  // Dyadic values keep every sum exact.
  auto truths = torch::randint(-40, 41, {50, 2}, torch::kFloat64) / 8.0;
  auto offsets = f64({-0.5, -0.25, 0.25, 0.5}, {1, 4, 1});
  auto draws = truths.unsqueeze(1) + offsets;
  auto r = bm::posterior_mean_correlation(draws, truths);
  CHECK(value_at(r, 0) == Approx(1.0).epsilon(1e-12));
  CHECK(value_at(r, 1) == Approx(1.0).epsilon(1e-12));
  CHECK(bm::normalized_rmse(draws, truths).abs().max().item<double>() == 0.0);

  auto range = (truths.amax(0) - truths.amin(0));
  auto biased = bm::normalized_rmse(draws + 0.75, truths);
  CHECK(torch::allclose(biased, 0.75 / range));
  CHECK(value_at(bm::posterior_mean_correlation(draws + 0.75, truths), 0) ==
        Approx(1.0).epsilon(1e-12));
}

TEST_CASE("diagnostics: contraction equals 1 - s^2 / prior variance for known spread",
          "[diagnostics]") {
  torch::manual_seed(8);
  const int64_t n = 6, s = 10;
  // Draws standardised per dataset (sample mean 0, unbiased variance 1), then
  // scaled by a known std per dataset and dimension.
  auto xi = torch::randn({n, s, 2}, torch::kFloat64);
  xi = xi - xi.mean(1, true);
  xi = xi / (xi.pow(2).sum(1, true) / (s - 1)).sqrt();
  auto post_std = torch::rand({n, 1, 2}, torch::kFloat64) + 0.1;
  auto draws = torch::randn({n, 1, 2}, torch::kFloat64) + post_std * xi;
  auto prior_var = f64({1.5, 4.0}, {2});
  auto expected = (1.0 - post_std.squeeze(1).pow(2) / prior_var).mean(0);
  CHECK(torch::allclose(bm::posterior_contraction(draws, prior_var), expected, 1e-12, 1e-12));
  // A posterior wider than the prior contracts negatively.
  CHECK(value_at(bm::posterior_contraction(draws, f64({1e-3, 1e-3}, {2})), 0) < 0.0);
}

TEST_CASE("diagnostics: ranks are invariant to a common shift and monotone transform",
          "[diagnostics]") {
  torch::manual_seed(3);
  // Multiples of 1/64 in [-3, 3]: shifts by 5 are exact, and ties are common.
  auto draws = torch::randint(-192, 193, {40, 30, 2}, torch::kFloat64) / 64.0;
  auto truths = torch::randint(-192, 193, {40, 2}, torch::kFloat64) / 64.0;
  auto ranks = bm::sbc_ranks(draws, truths);
  CHECK(torch::equal(ranks, bm::sbc_ranks(draws + 5.0, truths + 5.0)));
  CHECK(torch::equal(ranks, bm::sbc_ranks(draws.exp(), truths.exp())));
  CHECK(ranks.min().item<double>() >= 0.0);
  CHECK(ranks.max().item<double>() <= 1.0);
  // Fractions of S draws.
  CHECK(torch::allclose((ranks * 30).round(), ranks * 30));
}

TEST_CASE("diagnostics: bundle, JSON and table agree with the metric functions",
          "[diagnostics]") {
  auto syn = gaussian_posteriors(300, 50, 2, 0.5, 1.0, 77);
  auto prior_var = f64({1.25, 1.25}, {2});
  auto diag = bm::compute_diagnostics(syn.draws, syn.truths, prior_var, {"log_a", "b"});
  REQUIRE(diag.parameters.size() == 2);
  CHECK(diag.n_datasets == 300);
  CHECK(diag.n_draws == 50);
  auto levels = bm::calibration_levels();
  auto cal = bm::calibration_error(syn.draws, syn.truths, levels);
  auto contraction = bm::posterior_contraction(syn.draws, prior_var);
  auto z = bm::posterior_z_scores(syn.draws, syn.truths);
  for (int64_t d = 0; d < 2; ++d) {
    const auto& p = diag.parameters[static_cast<size_t>(d)];
    CHECK(p.calibration_error == Approx(value_at(cal, d)));
    CHECK(p.contraction == Approx(value_at(contraction, d)));
    CHECK(p.z_std == Approx(value_at(std_over_datasets(z), d)));
    CHECK(p.correlation == Approx(value_at(bm::posterior_mean_correlation(syn.draws, syn.truths), d)));
  }
  CHECK(diag.parameters[0].name == "log_a");

  auto json = nlohmann::json::parse(diag.to_json().dump());
  CHECK(json["n_datasets"] == 300);
  REQUIRE(json["parameters"].size() == 2);
  CHECK(json["parameters"][1]["name"] == "b");
  CHECK(json["parameters"][1]["nrmse"].get<double>() == Approx(diag.parameters[1].nrmse));
  CHECK(json["parameters"][0]["rank_ks"].get<double>() == Approx(diag.parameters[0].rank_ks));

  std::istringstream table(diag.table());
  std::string header, row_a, row_b, extra;
  std::getline(table, header);
  std::getline(table, row_a);
  std::getline(table, row_b);
  CHECK_FALSE(std::getline(table, extra));
  CHECK(header.rfind("parameter", 0) == 0);
  CHECK(header.find("contraction") != std::string::npos);
  CHECK(row_a.rfind("log_a", 0) == 0);
  CHECK(row_b.rfind("b ", 0) == 0);
  char contraction_text[32];
  std::snprintf(contraction_text, sizeof contraction_text, "%.4f", diag.parameters[1].contraction);
  CHECK(row_b.find(contraction_text) != std::string::npos);
  CHECK(row_a.size() == header.size());

  // Undefined metrics (constant truths and draws) are NaN, written as null.
  auto flat = bm::compute_diagnostics(torch::zeros({3, 4, 1}), torch::zeros({3, 1}),
                                      torch::ones({1}), {"c"});
  CHECK(std::isnan(flat.parameters[0].correlation));
  CHECK(std::isnan(flat.parameters[0].nrmse));
  CHECK(std::isnan(flat.parameters[0].z_mean));
  CHECK(nlohmann::json::parse(flat.to_json().dump())["parameters"][0]["correlation"].is_null());

  CHECK_THROWS_AS(bm::compute_diagnostics(syn.draws, syn.truths, prior_var, {"only_one"}),
                  std::invalid_argument);
  CHECK_THROWS_AS(bm::sbc_ranks(syn.draws, syn.truths.slice(0, 0, 10)), std::invalid_argument);
  CHECK_THROWS_AS(bm::posterior_contraction(syn.draws, f64({1}, {1})), std::invalid_argument);
}

TEST_CASE("diagnostics: posterior items reproduce the ranks, z-scores and contraction", "[diagnostics]") {
  const auto s = gaussian_posteriors(40, 30, 2, 0.5, 1.0, 11);
  const auto prior = f64({0.25, 1.0}, {2});
  const auto items = bm::posterior_items(s.draws, s.truths, prior, {"log_a", "b"});
  REQUIRE(items.n_draws == 30);
  REQUIRE(items.parameters.size() == 2);
  const auto ranks = bm::sbc_ranks(s.draws, s.truths);
  const auto z = bm::posterior_z_scores(s.draws, s.truths);
  const auto contraction = bm::posterior_contraction(s.draws, prior);
  for (int64_t d = 0; d < 2; ++d) {
    const auto& p = items.parameters[static_cast<size_t>(d)];
    REQUIRE(p.mean.size() == 40);
    double contraction_sum = 0.0;
    for (int64_t n = 0; n < 40; ++n) {
      const auto i = static_cast<size_t>(n);
      // The rank count over S is the fractional rank exactly (both count draws below the truth).
      CHECK(static_cast<double>(p.rank[i]) / 30.0 == ranks[n][d].item<double>());
      // Same float64 arithmetic in another order: a few ulps of |z| < 10.
      CHECK((p.mean[i] - p.truth[i]) / p.std[i] == Approx(z[n][d].item<double>()).margin(1e-12));
      contraction_sum += 1.0 - p.std[i] * p.std[i] / p.prior_variance;
    }
    CHECK(contraction_sum / 40.0 == Approx(value_at(contraction, d)).margin(1e-12));
  }
  // The JSON keeps 4 significant digits: within half a unit of the 4th digit, 5e-4 relative.
  const auto json = items.to_json();
  CHECK(json["parameters"][1]["name"] == "b");
  for (size_t i = 0; i < 40; ++i) {
    const double exact = items.parameters[1].mean[i];
    CHECK(std::abs(json["parameters"][1]["mean"][i].get<double>() - exact) <= 5e-4 * std::abs(exact));
    CHECK(json["parameters"][1]["rank"][i].get<int64_t>() == items.parameters[1].rank[i]);
  }
}
