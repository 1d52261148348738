#include <catch2/catch.hpp>

#include "models/networks/coupling_flow.hpp"

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace bfhpo::models;

namespace {

constexpr double kPi = 3.14159265358979323846;

FlowSpec small_spec(int64_t depth = 3, int64_t width = 16) {
  FlowSpec spec;
  spec.depth = depth;
  spec.subnet_width = width;
  spec.subnet_depth = 2;
  return spec;
}

// Adam on the NLL of (theta, context); returns the last loss.
double fit(CouplingFlow& flow, const std::function<std::pair<torch::Tensor, torch::Tensor>(int)>& batch,
           int steps, double lr) {
  torch::optim::Adam opt(flow->parameters(), torch::optim::AdamOptions(lr));
  double loss_value = 0;
  for (int step = 0; step < steps; ++step) {
    auto [theta, context] = batch(step);
    auto loss = -flow->log_prob(theta, context).mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
  }
  return loss_value;
}

// A flow moved well away from the identity by a few large Adam steps on an arbitrary target.
CouplingFlow perturbed_flow(int64_t dim, int64_t context_dim, uint64_t seed) {
  torch::manual_seed(static_cast<int64_t>(seed));
  CouplingFlow flow(dim, context_dim, small_spec(), seed);
  auto theta = torch::randn({64, dim}).pow(3) + 1;
  auto context = torch::randn({64, context_dim});
  fit(flow, [&](int) { return std::make_pair(theta, context); }, 10, 0.05);
  return flow;
}

}  // namespace

TEST_CASE("CouplingFlow inverse undoes forward to 1e-5, fresh and trained, for several dims", "[networks][flow]") {
  const int64_t dim = GENERATE(1, 2, 3, 5);
  torch::manual_seed(3);
  auto x = torch::randn({32, dim}) * 2;
  auto context = torch::randn({32, 4});

  CouplingFlow fresh(dim, 4, small_spec(), 7);
  auto [z_fresh, ld_fresh] = fresh->forward(x, context);
  REQUIRE(torch::allclose(fresh->inverse(z_fresh, context).first, x, 1e-5, 1e-5));

  auto flow = perturbed_flow(dim, 4, 11);
  for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
    INFO("dtype " << dtype);
    flow->to(dtype);
    auto [z, log_det] = flow->forward(x.to(dtype), context.to(dtype));
    REQUIRE(z.sizes() == x.sizes());
    REQUIRE(log_det.sizes().vec() == std::vector<int64_t>{32});
    // Trained: the couplings are no longer the identity, the log-det varies by row.
    REQUIRE(log_det.std().item<double>() > 1e-3);
    REQUIRE(torch::allclose(flow->inverse(z, context.to(dtype)).first, x.to(dtype), 1e-5, 1e-5));
    // z -> x -> z as well.
    auto z_any = torch::randn({32, dim}, dtype) * 2;
    REQUIRE(torch::allclose(flow->forward(flow->inverse(z_any, context.to(dtype)).first, context.to(dtype)).first, z_any,
                            1e-5, 1e-5));
  }
}

TEST_CASE("A freshly built CouplingFlow is the identity up to its fixed permutation", "[networks][flow]") {
  // Actnorm not yet initialised (eval mode) and zero-initialised coupling outputs:
  // every layer only permutes, exactly, with log-det 0 and log q = N(0, I).
  const int64_t dim = GENERATE(2, 5);
  CouplingFlow flow(dim, 3, small_spec(4, 16), 13);
  flow->eval();
  auto composite = torch::arange(dim, torch::kLong);
  for (const auto& buffer : flow->named_buffers())
    if (buffer.key().rfind("permutation", 0) == 0) composite = composite.index_select(0, buffer.value());
  torch::manual_seed(12);
  auto x = torch::randn({64, dim}) * 3 + 1;
  auto context = torch::randn({64, 3});
  auto [z, log_det] = flow->forward(x, context);
  REQUIRE(torch::equal(z, x.index_select(1, composite)));
  REQUIRE(torch::equal(log_det, torch::zeros({64})));
  REQUIRE(torch::equal(flow->inverse(z, context).first, x));
  auto standard_normal = -0.5 * x.pow(2).sum(1) - 0.5 * static_cast<double>(dim) * std::log(2 * kPi);
  REQUIRE(torch::allclose(flow->log_prob(x, context), standard_normal, 1e-6, 1e-6));
}

TEST_CASE("CouplingFlow log-det equals log|det| of the autograd Jacobian", "[networks][flow]") {
  const int64_t dim = GENERATE(2, 3);
  auto flow = perturbed_flow(dim, 3, 5);
  flow->to(torch::kFloat64);  // also casts the permutation buffers; they must still index
  flow->eval();
  torch::manual_seed(9);
  for (int row = 0; row < 3; ++row) {
    auto x = torch::randn({1, dim}, torch::kFloat64).requires_grad_(true);
    auto context = torch::randn({1, 3}, torch::kFloat64);
    auto [z, log_det] = flow->forward(x, context);
    std::vector<torch::Tensor> jacobian_rows;
    for (int64_t i = 0; i < dim; ++i)
      jacobian_rows.push_back(torch::autograd::grad({z[0][i]}, {x}, {}, /*retain_graph=*/true)[0][0]);
    auto jacobian = torch::stack(jacobian_rows);
    const double expected = std::get<1>(torch::slogdet(jacobian)).item<double>();
    REQUIRE(log_det.item<double>() == Approx(expected).margin(1e-9));
    REQUIRE(std::abs(expected) > 1e-2);
  }
}

TEST_CASE("A fresh CouplingFlow is a diagonal Gaussian fitted by actnorm on the first batch", "[networks][flow]") {
  torch::manual_seed(4);
  CouplingFlow flow(2, 3, small_spec(), 1);
  auto x = torch::randn({256, 2}) * torch::tensor({2.0, 0.5}) + torch::tensor({3.0, -1.0});
  auto context = torch::randn({256, 3});
  auto [z, log_det] = flow->forward(x, context);  // training mode: initialises actnorm
  auto mean = x.mean(0);
  auto std = (x - mean).pow(2).mean(0).sqrt();
  auto standardized = (x - mean) / std;
  for (int64_t k = 0; k < 2; ++k) {
    const bool some_input_matches = torch::allclose(z.select(1, k), standardized.select(1, 0), 1e-4, 1e-4) ||
                                    torch::allclose(z.select(1, k), standardized.select(1, 1), 1e-4, 1e-4);
    REQUIRE(some_input_matches);
  }
  REQUIRE(torch::allclose(log_det, -std.log().sum().expand({256}), 1e-4, 1e-4));

  flow->eval();
  auto other = torch::randn({16, 2}) * 3;
  auto other_context = torch::randn({16, 3});
  auto gaussian = (-0.5 * ((other - mean) / std).pow(2) - std.log() - 0.5 * std::log(2 * kPi)).sum(1);
  REQUIRE(torch::allclose(flow->log_prob(other, other_context), gaussian, 1e-4, 1e-4));
}

TEST_CASE("CouplingFlow weights, permutations and actnorm state survive save/load", "[networks][flow]") {
  auto trained = perturbed_flow(3, 2, 21);
  std::stringstream stream;
  torch::save(trained, stream);
  CouplingFlow loaded(3, 2, small_spec(), 999);  // other seed: other permutations
  auto permutations = [](CouplingFlow& flow) {
    std::vector<torch::Tensor> out;
    for (const auto& buffer : flow->named_buffers())
      if (buffer.key().find("permutation") != std::string::npos) out.push_back(buffer.value().clone());
    return torch::stack(out);
  };
  REQUIRE_FALSE(torch::equal(permutations(loaded), permutations(trained)));
  torch::load(loaded, stream);
  REQUIRE(torch::equal(permutations(loaded), permutations(trained)));
  torch::manual_seed(2);
  auto x = torch::randn({8, 3}) * 5 + 2;  // a first training batch that would re-initialise actnorm
  auto context = torch::randn({8, 2});
  auto [z_trained, ld_trained] = trained->forward(x, context);
  auto [z_loaded, ld_loaded] = loaded->forward(x, context);
  REQUIRE(torch::allclose(z_trained, z_loaded));
  REQUIRE(torch::allclose(ld_trained, ld_loaded));
}

TEST_CASE("CouplingFlow rejects an empty target; a one-dimensional one learns a context-dependent Gaussian",
          "[networks][flow]") {
  REQUIRE_THROWS_WITH(CouplingFlow(0, 3, small_spec()), Catch::Contains("param_dim must be >= 1"));
  torch::manual_seed(8);
  CouplingFlow flow(1, 1, small_spec(), 4);
  const auto batch = [](int) {
    auto context = torch::randn({256, 1});
    return std::make_pair(2 * context + 0.5 * torch::randn({256, 1}), context);
  };
  fit(flow, batch, 400, 1e-2);
  torch::NoGradGuard no_grad;
  // The true conditional is N(2c, 0.25): its mean NLL is 0.5 log(2 pi e 0.25) = 0.726; with
  // 4096 rows the sample mean's sd is about 0.011.
  const auto context = torch::randn({4096, 1});
  const auto theta = 2 * context + 0.5 * torch::randn({4096, 1});
  const double nll = -flow->log_prob(theta, context).mean().item<double>();
  CHECK(nll == Approx(0.726).margin(0.08));
  const auto draws = flow->sample(2000, torch::tensor({{1.0f}})).first;
  CHECK(draws.mean().item<double>() == Approx(2.0).margin(0.08));
  CHECK(draws.std().item<double>() == Approx(0.5).margin(0.05));
}

TEST_CASE("A trained CouplingFlow's density integrates to one on a fine grid", "[networks][flow]") {
  torch::manual_seed(6);
  CouplingFlow flow(2, 1, small_spec(), 3);
  fit(flow, [](int) {
        auto u = torch::randn({128, 1});
        auto v = torch::randn({128, 1});
        auto context = torch::rand({128, 1});
        return std::make_pair(torch::cat({u, 0.5 * u.pow(2) + 0.4 * v - 0.5 + context}, 1), context);
      }, 150, 1e-2);
  flow->eval();
  torch::NoGradGuard no_grad;
  const int64_t n = 400;
  const double lo = -7, hi = 9;
  const double step = (hi - lo) / n;
  auto axis = torch::arange(n).to(torch::kFloat32) * step + (lo + step / 2);
  auto grid = torch::stack(torch::meshgrid({axis, axis}, "ij"), -1).reshape({-1, 2});
  for (double c : {0.2, 0.8}) {
    auto density = flow->log_prob(grid, torch::full({grid.size(0), 1}, c)).exp();
    REQUIRE(density.sum().item<double>() * step * step == Approx(1.0).margin(0.02));
  }
}

TEST_CASE("CouplingFlow fit to a correlated Gaussian samples its mean and covariance", "[networks][flow]") {
  torch::manual_seed(8);
  auto mean = torch::tensor({1.0, -2.0});
  auto chol = torch::tensor({{1.0, 0.0}, {0.9, 0.5}});  // cov [[1, .9], [.9, 1.06]]
  auto cov = chol.matmul(chol.t());
  CouplingFlow flow(2, 0, small_spec(2, 16), 4);
  fit(flow, [&](int) {
        return std::make_pair(torch::randn({256, 2}).matmul(chol.t()) + mean, torch::empty({256, 0}));
      }, 300, 1e-2);
  flow->eval();
  torch::NoGradGuard no_grad;
  auto samples = flow->sample(20000, torch::empty({1, 0})).first[0];
  REQUIRE(torch::allclose(samples.mean(0), mean, 0, 0.05));
  auto centred = samples - samples.mean(0);
  auto sample_cov = centred.t().matmul(centred) / (samples.size(0) - 1);
  REQUIRE(torch::allclose(sample_cov, cov, 0, 0.08));
}

TEST_CASE("CouplingFlow sample: each row's context once, the same draws and log q as the repeated context's",
          "[networks][flow]") {
  const int64_t dim = GENERATE(1, 2, 3);
  auto flow = perturbed_flow(dim, 4, 13);
  flow->to(torch::kFloat64);  // in double the first layer's two orders of summation agree to ~1e-15
  const auto context = torch::randn({5, 4}, torch::kFloat64);
  torch::manual_seed(21);
  const auto [theta, log_q] = flow->sample(6, context);
  REQUIRE(theta.sizes().vec() == std::vector<int64_t>{5, 6, dim});
  // The same standard normal draws through the inverse with every row's context repeated per draw.
  torch::manual_seed(21);
  const auto z = torch::randn({5 * 6, dim}, torch::kFloat64);
  const auto repeated = context.repeat_interleave(6, 0);
  const auto [expected, log_det] = flow->inverse(z, repeated);
  REQUIRE(torch::allclose(theta.reshape({-1, dim}), expected, 1e-12, 1e-12));
  REQUIRE(torch::allclose(log_q.reshape({-1}), flow->log_prob(expected, repeated), 1e-9, 1e-9));
}
