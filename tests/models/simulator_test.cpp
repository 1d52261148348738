#include <catch2/catch.hpp>

#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace bfhpo::models;
using bfhpo::test::simulator_at;

namespace {

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The models' response probabilities written out from their textbook
// formulas, independently of the library: P(y = k) for k = 0..K-1 of one
// person (ability theta) and one item (its target parameters).
std::vector<double> reference_probabilities(const std::string& model, double theta, const std::vector<double>& item) {
  if (model == "rasch") {
    const double p = logistic(theta - item[0]);
    return {1 - p, p};
  }
  if (model == "2pl") {
    const double p = logistic(std::exp(item[0]) * (theta - item[1]));
    return {1 - p, p};
  }
  if (model == "3pl") {
    const double c = logistic(item[2]);
    const double p = c + (1 - c) * logistic(std::exp(item[0]) * (theta - item[1]));
    return {1 - p, p};
  }
  // grm: P(y >= k) = logistic(a (theta - b_k)), P(y = k) = P(y >= k) - P(y >= k + 1).
  const double a = std::exp(item[0]);
  std::vector<double> at_least{1.0};
  for (size_t k = 1; k < item.size(); ++k) at_least.push_back(logistic(a * (theta - item[k])));
  at_least.push_back(0.0);
  std::vector<double> p;
  for (size_t k = 0; k + 1 < at_least.size(); ++k) p.push_back(at_least[k] - at_least[k + 1]);
  return p;
}

// Pearson's statistic of the simulated category counts per item against the
// expected counts under `model`'s probabilities at the batch's true
// abilities and item parameters: per item d^T V^-1 d over categories
// 1..K-1 (d observed - expected counts, V the counts' covariance
// sum_p diag(p) - p p^T), summed over items. Under the model it is
// chi-square with J (K - 1) degrees of freedom.
double pearson_statistic(const SimulatedBatch& batch, const std::string& model, int64_t n_categories) {
  const auto y_tensor = batch.responses[0].to(torch::kFloat64).contiguous();
  const auto theta_tensor = batch.abilities[0].to(torch::kFloat64).contiguous();
  const auto params_tensor = batch.item_params[0].to(torch::kFloat64).contiguous();
  const auto y = y_tensor.accessor<double, 2>();
  const auto theta = theta_tensor.accessor<double, 1>();
  const auto params = params_tensor.accessor<double, 2>();
  const int64_t persons = y.size(0), items = y.size(1), k1 = n_categories - 1;
  double statistic = 0;
  for (int64_t j = 0; j < items; ++j) {
    std::vector<double> item;
    for (int64_t d = 0; d < params.size(1); ++d) item.push_back(params[j][d]);
    auto diff = torch::zeros({k1}, torch::kFloat64);
    auto cov = torch::zeros({k1, k1}, torch::kFloat64);
    auto d_acc = diff.accessor<double, 1>();
    auto c_acc = cov.accessor<double, 2>();
    for (int64_t p = 0; p < persons; ++p) {
      const auto probs = reference_probabilities(model, theta[p], item);
      const auto observed = static_cast<int64_t>(y[p][j]);
      for (int64_t a = 0; a < k1; ++a) {
        const double pa = probs[static_cast<size_t>(a + 1)];
        d_acc[a] += (observed == a + 1 ? 1.0 : 0.0) - pa;
        for (int64_t b = 0; b < k1; ++b) c_acc[a][b] += (a == b ? pa : 0.0) - pa * probs[static_cast<size_t>(b + 1)];
      }
    }
    statistic += diff.dot(cov.inverse().mv(diff)).item<double>();
  }
  return statistic;
}

// The chi-square quantile at 1 - 1e-4 (z = 3.719), Wilson-Hilferty.
double chi_square_critical(double df) {
  const double h = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - h + 3.719 * std::sqrt(h), 3);
}

struct ModelCase {
  std::string model;
  int64_t n_categories;
};

const std::vector<ModelCase> kModels{{"rasch", 2}, {"2pl", 2}, {"3pl", 2}, {"grm", 2}, {"grm", 5}};

}  // namespace

TEST_CASE("Simulator: simulated response frequencies follow each model's probabilities (chi-square)", "[simulator]") {
  for (const auto& [model, k] : kModels) {
    INFO(model << " K=" << k);
    const Simulator simulator(simulator_at({12, 12, 1500, 1500}, model, k), 21, torch::kCPU);
    const auto batch = simulator.sample(1, 0);
    const double df = 12.0 * static_cast<double>(k - 1);
    const double statistic = pearson_statistic(batch, model, k);
    INFO("X^2 = " << statistic << " on " << df << " df, critical " << chi_square_critical(df));
    CHECK(statistic < chi_square_critical(df));
  }
}

TEST_CASE("Simulator: the chi-square check detects a wrong likelihood", "[simulator]") {
  // 3PL data judged as 2PL (guessing ignored) and GRM data judged with its
  // thresholds 0.3 too high must both fail the same check.
  const Simulator three_pl(simulator_at({12, 12, 1500, 1500}, "3pl"), 21, torch::kCPU);
  auto batch = three_pl.sample(1, 0);
  batch.item_params = batch.item_params.narrow(-1, 0, 2);
  CHECK(pearson_statistic(batch, "2pl", 2) > chi_square_critical(12));

  const Simulator grm(simulator_at({12, 12, 1500, 1500}, "grm", 4), 21, torch::kCPU);
  auto graded = grm.sample(1, 0);
  graded.item_params = torch::cat({graded.item_params.narrow(-1, 0, 1), graded.item_params.narrow(-1, 1, 3) + 0.3}, -1);
  CHECK(pearson_statistic(graded, "grm", 4) > chi_square_critical(36));
}

TEST_CASE("category_probabilities: each model's formula, rows sum to one", "[simulator]") {
  for (const auto& [model, k] : kModels) {
    INFO(model << " K=" << k);
    const Simulator simulator(simulator_at({7, 7, 9, 9}, model, k), 3, torch::kCPU);
    const auto batch = simulator.sample(2, 0);
    const auto probs = category_probabilities(simulator.model(), batch.abilities, batch.item_params);
    REQUIRE(probs.sizes() == torch::IntArrayRef({2, 9, 7, k}));
    CHECK(torch::allclose(probs.sum(-1).to(torch::kFloat64), torch::ones({2, 9, 7}, torch::kFloat64), 0, 1e-6));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t p = 0; p < 9; ++p)
        for (int64_t j = 0; j < 7; ++j) {
          std::vector<double> item;
          for (int64_t d = 0; d < batch.item_params.size(2); ++d) item.push_back(batch.item_params[b][j][d].item<double>());
          const auto expected = reference_probabilities(model, batch.abilities[b][p].item<double>(), item);
          for (int64_t c = 0; c < k; ++c)
            REQUIRE(probs[b][p][j][c].item<double>() == Approx(expected[static_cast<size_t>(c)]).margin(1e-5));
        }
  }
}

TEST_CASE("Simulator: deterministic in (seed, batch index), shapes within the ranges", "[simulator]") {
  const Simulator sim(simulator_at({4, 6, 10, 12}, "grm", 3, 0.2), 7, torch::kCPU);
  const auto a = sim.sample(3, 11);
  const auto b = sim.sample(3, 11);
  REQUIRE(torch::equal(a.responses, b.responses));
  REQUIRE(torch::equal(a.mask, b.mask));
  REQUIRE(torch::equal(a.item_params, b.item_params));
  for (uint64_t i = 0; i < 20; ++i) {
    const auto batch = sim.sample(2, i);
    const auto J = batch.item_params.size(1);
    const auto P = batch.responses.size(1);
    CHECK(J >= 4);
    CHECK(J <= 6);
    CHECK(P >= 10);
    CHECK(P <= 12);
    REQUIRE(batch.responses.sizes() == torch::IntArrayRef({2, P, J}));
    REQUIRE(batch.mask.sizes() == torch::IntArrayRef({2, P, J}));
    REQUIRE(batch.item_params.sizes() == torch::IntArrayRef({2, J, 3}));
  }
  const auto c = sim.sample(3, 12);
  CHECK_FALSE((a.item_params.sizes() == c.item_params.sizes() && torch::equal(a.item_params, c.item_params)));
}

TEST_CASE("Simulator: names, dimension and categories of every model", "[simulator]") {
  CHECK(Simulator(simulator_at({}, "rasch"), 1, torch::kCPU).parameter_names() == std::vector<std::string>{"b"});
  CHECK(Simulator(simulator_at({}, "2pl"), 1, torch::kCPU).parameter_names() == std::vector<std::string>{"log_a", "b"});
  CHECK(Simulator(simulator_at({}, "3pl"), 1, torch::kCPU).parameter_names() ==
        std::vector<std::string>{"log_a", "b", "logit_c"});
  const Simulator grm(simulator_at({}, "grm", 4), 1, torch::kCPU);
  CHECK(grm.parameter_names() == std::vector<std::string>{"log_a", "b1", "b2", "b3"});
  CHECK(grm.param_dim() == 4);
  CHECK(grm.n_categories() == 4);
}

namespace {

// 20 items x 5 persons of `model` with every prior away from its default.
SimulatorSpec non_default_priors(const std::string& model, int64_t k) {
  SimulatorSpec spec = simulator_at({20, 20, 5, 5}, model, k);
  spec.priors.log_a = {0.2, 0.3};
  spec.priors.b = {-0.5, 1.5};
  spec.priors.c = {4, 12};
  spec.priors.thresholds = {0.5, 2.0};
  return spec;
}

}  // namespace

TEST_CASE("Simulator: item parameters follow the configured priors, prior_variance is their variance",
          "[simulator]") {
  for (const auto& [model, k] : kModels) {
    INFO(model << " K=" << k);
    const Simulator simulator(non_default_priors(model, k), 5, torch::kCPU);
    const auto params = simulator.sample(1000, 0).item_params.reshape({-1, simulator.param_dim()}).to(torch::kFloat64);
    const auto variance = params.var(0);
    const auto prior = simulator.prior_variance();
    for (int64_t d = 0; d < simulator.param_dim(); ++d) {
      INFO(simulator.parameter_names()[static_cast<size_t>(d)]);
      // 20000 draws: the sample variance's relative sd is sqrt(2 / 20000) = 1% for a normal.
      CHECK(variance[d].item<double>() == Approx(prior[d].item<double>()).epsilon(0.05));
    }
    const auto mean = params.mean(0);
    if (model != "rasch" && model != "grm") {
      CHECK(mean[0].item<double>() == Approx(0.2).margin(0.02));
      CHECK(mean[1].item<double>() == Approx(-0.5).margin(0.05));
    }
    if (model == "rasch") CHECK(mean[0].item<double>() == Approx(-0.5).margin(0.05));
    if (model == "3pl") {
      // c = sigmoid(logit_c) ~ Beta(4, 12): mean 0.25.
      CHECK(torch::sigmoid(params.select(1, 2)).mean().item<double>() == Approx(0.25).margin(0.005));
    }
    if (model == "grm") {
      const auto thresholds = params.narrow(1, 1, k - 1);
      CHECK(thresholds.mean().item<double>() == Approx(0.5).margin(0.05));
      if (k > 2) CHECK((thresholds.narrow(1, 1, k - 2) > thresholds.narrow(1, 0, k - 2)).all().item<bool>());
    }
  }
}

TEST_CASE("ItemResponseModel::log_prior is the density the item parameters are drawn from", "[simulator]") {
  // Importance sampling from a wide normal q (twice the draws' sd per
  // component): with p = exp(log_prior), mean(p / q) estimates the prior's
  // mass (1) and mean(p / q * x) / mean(p / q) its moments, which must match
  // the draws'. 400000 proposals and 40000 draws: the estimates' standard
  // errors are below 0.5% of the mass and 0.01 sd, so the tolerances are > 5 SE.
  for (const auto& [model, k] : kModels) {
    INFO(model << " K=" << k);
    const Simulator simulator(non_default_priors(model, k), 6, torch::kCPU);
    const int64_t d = simulator.param_dim();
    const auto draws = simulator.sample(2000, 0).item_params.reshape({-1, d}).to(torch::kFloat64);
    const auto center = draws.mean(0), spread = 2.0 * draws.std(0);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(17);
    const auto z = at::normal(0.0, 1.0, {400000, d}, generator, torch::TensorOptions().dtype(torch::kFloat64));
    const auto proposals = center + spread * z;
    const auto log_q = (-0.5 * z * z - spread.log() - 0.5 * std::log(2.0 * M_PI)).sum(1);
    const auto weights = (simulator.model().log_prior(proposals) - log_q).exp();
    CHECK(weights.mean().item<double>() == Approx(1.0).margin(0.03));
    const auto is_mean = (weights.unsqueeze(1) * proposals).sum(0) / weights.sum();
    const auto is_sd = ((weights.unsqueeze(1) * (proposals - is_mean).pow(2)).sum(0) / weights.sum()).sqrt();
    for (int64_t i = 0; i < d; ++i) {
      INFO(simulator.parameter_names()[static_cast<size_t>(i)]);
      const double sd = draws.std(0)[i].item<double>();
      CHECK(is_mean[i].item<double>() == Approx(center[i].item<double>()).margin(0.05 * sd));
      CHECK(is_sd[i].item<double>() == Approx(sd).epsilon(0.05));
    }
  }
  // Out of order thresholds are outside the GRM prior's support.
  const Simulator grm(simulator_at({}, "grm", 4), 1, torch::kCPU);
  const auto unordered = torch::tensor({0.0, -1.0, 1.0, 0.5}, torch::kFloat64);
  CHECK(std::isinf(grm.model().log_prior(unordered).item<double>()));
  CHECK(std::isfinite(grm.model().log_prior(unordered.index({torch::tensor({0, 1, 3, 2})})).item<double>()));
}

TEST_CASE("Simulator: missing cells at the configured rate, masked responses are 0, none by default",
          "[simulator]") {
  const Simulator complete(simulator_at({10, 10, 50, 50}, "grm", 3), 2, torch::kCPU);
  CHECK(complete.sample(4, 0).mask.min().item<double>() == 1.0);

  const Simulator fixed(simulator_at({30, 30, 200, 200}, "grm", 3, 0.25), 2, torch::kCPU);
  const auto batch = fixed.sample(8, 0);
  const double observed = batch.mask.mean().item<double>();
  // 48000 cells: the share's sd is sqrt(0.25 * 0.75 / 48000) = 0.002.
  CHECK(observed == Approx(0.75).margin(0.01));
  CHECK((batch.responses * (1 - batch.mask)).abs().sum().item<double>() == 0.0);
  CHECK(batch.responses.max().item<double>() == 2.0);

  SimulatorSpec ranged = simulator_at({30, 30, 200, 200});
  ranged.missing = {0.1, 0.5};
  const auto shares = 1 - Simulator(ranged, 3, torch::kCPU).sample(64, 0).mask.mean({1, 2});
  CHECK(shares.min().item<double>() >= 0.1 - 0.02);
  CHECK(shares.max().item<double>() <= 0.5 + 0.02);
  CHECK(shares.std().item<double>() > 0.05);  // one rate per dataset, not one for all
}

TEST_CASE("rescaled item params answer at e^s theta + m as the params did at theta", "[simulator]") {
  for (const auto& [model_name, categories] :
       std::vector<std::pair<std::string, int64_t>>{{"rasch", 2}, {"2pl", 2}, {"3pl", 2}, {"grm", 5}}) {
    const auto model = make_item_response_model(simulator_at({4, 4, 10, 10}, model_name, categories));
    auto generator = at::make_generator<at::CPUGeneratorImpl>(17);
    const auto params = model->draw_item_params(3, 4, generator).to(torch::kFloat64);  // [C=3, J, D]
    const auto location = torch::tensor({0.3, -0.7, 0.0}, torch::kFloat64);
    const bool scales = model_name != "rasch";  // the Rasch model fixes a = 1
    const auto log_scale = scales ? torch::tensor({0.2, -0.1, 0.4}, torch::kFloat64) : torch::zeros({3}, torch::kFloat64);
    const auto moved = model->rescale_abilities(params, location, log_scale);
    const auto theta = torch::linspace(-3.0, 3.0, 13, torch::kFloat64).unsqueeze(0).expand({3, 13});
    const auto theta_moved = theta * log_scale.exp().unsqueeze(1) + location.unsqueeze(1);
    INFO(model_name);
    CHECK(torch::allclose(category_probabilities(*model, theta_moved, moved),
                          category_probabilities(*model, theta, params), 1e-12, 1e-14));
  }
}

TEST_CASE("GRM: the thresholds' prior variances are those of sorted normal draws, to the tables' digits",
          "[simulator]") {
  // Two sorted N(0, 1) draws: each has variance 1 - 1/pi exactly. Five: 0.4475, 0.3115, 0.2868 (Teichroew
  // 1956's table, to its four digits). Scaled by the thresholds' sd squared.
  auto spec = simulator_at({5, 5, 100, 100}, "grm", 3);
  spec.priors.thresholds = {0.5, 2.0};
  const auto three = make_item_response_model(spec)->prior_variance();
  CHECK(three[1].item<double>() == Approx(4.0 * (1.0 - 1.0 / M_PI)).epsilon(1e-9));
  CHECK(three[2].item<double>() == Approx(4.0 * (1.0 - 1.0 / M_PI)).epsilon(1e-9));
  const auto six = make_item_response_model(simulator_at({5, 5, 100, 100}, "grm", 6))->prior_variance();
  const std::vector<double> tabulated{0.4475, 0.3115, 0.2868, 0.3115, 0.4475};
  for (size_t r = 0; r < tabulated.size(); ++r)
    CHECK(six[static_cast<int64_t>(r) + 1].item<double>() == Approx(tabulated[r]).margin(0.00005));
}
