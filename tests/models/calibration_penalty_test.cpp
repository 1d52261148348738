#include <catch2/catch.hpp>

#include "models/calibration_penalty.hpp"
#include "models/diagnostics.hpp"
#include "tests/models/gaussian_toy.hpp"

#include <cmath>

#include <functional>
#include <unordered_set>
#include <vector>

using namespace bfhpo::models;

namespace {

CalibrationSpec spec_with(bool conservative, int64_t n_post_samples, int64_t chunk, double temperature) {
  CalibrationSpec spec;
  spec.enabled = true;
  spec.conservative = conservative;
  spec.n_post_samples = n_post_samples;
  spec.log_prob_chunk_size = chunk;
  spec.ste_temperature = temperature;
  return spec;
}

FlowSpec small_spec() {
  FlowSpec spec;
  spec.depth = 2;
  spec.subnet_width = 16;
  spec.subnet_depth = 2;
  return spec;
}

// A flow whose couplings are far from the identity (a few large Adam steps).
CouplingFlow perturbed_flow() {
  torch::manual_seed(1);
  CouplingFlow flow(2, 3, small_spec(), 2);
  torch::optim::Adam opt(flow->parameters(), torch::optim::AdamOptions(0.05));
  auto theta = torch::randn({64, 2}).pow(3);
  auto context = torch::randn({64, 3});
  for (int step = 0; step < 10; ++step) {
    auto loss = -flow->log_prob(theta, context).mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  return flow;
}

struct ValueAndGrads {
  double value;
  std::vector<torch::Tensor> grads;  // flow parameters, then the context
};

ValueAndGrads value_and_grads(CouplingFlow& flow, const std::function<torch::Tensor(const torch::Tensor&)>& penalty,
                              const torch::Tensor& context_values) {
  flow->zero_grad();
  auto context = context_values.clone().requires_grad_(true);
  torch::manual_seed(42);
  auto value = penalty(context);
  value.backward();
  ValueAndGrads out{value.item<double>(), {}};
  for (auto& p : flow->parameters()) out.grads.push_back(p.grad().clone());
  out.grads.push_back(context.grad().clone());
  return out;
}

constexpr double kLogTwoPi = 1.8378770664093454836;

// log N(theta; mean, diag(std^2)) summed over the last dim: [N, D] or [N, S, D] against [N, D].
torch::Tensor gaussian_log_prob(const torch::Tensor& theta, const torch::Tensor& mean, const torch::Tensor& std) {
  const bool per_sample = theta.dim() == 3;
  const auto m = per_sample ? mean.unsqueeze(1) : mean;
  const auto s = per_sample ? std.unsqueeze(1) : std;
  return (-0.5 * ((theta - m) / s).pow(2) - s.log() - 0.5 * kLogTwoPi).sum(-1);
}

size_t autograd_nodes(const torch::Tensor& output) {
  std::unordered_set<torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> stack{output.grad_fn().get()};
  while (!stack.empty()) {
    auto* node = stack.back();
    stack.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    for (const auto& edge : node->next_edges()) stack.push_back(edge.function.get());
  }
  return seen.size();
}

}  // namespace

TEST_CASE("Rank penalty: sorted hard ranks against k/(N+1), one- and two-sided", "[calibration]") {
  // Rows with ranks 1, 0 and 1/2: sorted (0, 1/2, 1) against the grid (1/4, 1/2, 3/4).
  auto true_lp = torch::tensor({-10.0, 10.0, 0.5});
  auto sample_lp = torch::tensor({{0.0, 1.0}, {0.0, 1.0}, {0.0, 1.0}});
  const double two_sided = rank_calibration_penalty(true_lp, sample_lp, spec_with(false, 2, 2, 0.01)).item<double>();
  const double conservative = rank_calibration_penalty(true_lp, sample_lp, spec_with(true, 2, 2, 0.01)).item<double>();
  REQUIRE(two_sided == Approx((0.0625 + 0.0625) / 3));
  REQUIRE(conservative == Approx(0.0625 / 3));
}

TEST_CASE("Rank penalty backward is the gradient of the sigmoid relaxation", "[calibration]") {
  // One row, rank 1 (both samples more probable than the truth), grid 1/2: penalty (1 - 1/2)^2.
  auto true_lp = torch::tensor({-0.5}, torch::kFloat64).requires_grad_(true);
  auto sample_lp = torch::tensor({{0.0, 1.0}}, torch::kFloat64).requires_grad_(true);
  auto penalty = rank_calibration_penalty(true_lp, sample_lp, spec_with(true, 2, 2, 2.0));
  REQUIRE(penalty.item<double>() == Approx(0.25));
  penalty.backward();
  auto u = (torch::tensor({0.0, 1.0}, torch::kFloat64) + 0.5) / 2.0;
  auto dsigmoid = torch::sigmoid(u) * (1 - torch::sigmoid(u)) / 2.0;  // d sigmoid(u_j) / d lp_j
  // d penalty / d alpha = 2 (alpha - 1/2) = 1; d alpha / d lp_j = dsigmoid_j / 2.
  REQUIRE(torch::allclose(sample_lp.grad()[0], dsigmoid / 2));
  REQUIRE(true_lp.grad().item<double>() == Approx(-(dsigmoid / 2).sum().item<double>()));
}

// In float64: each flow-parameter gradient is a sum over 16 x 20 samples of
// terms of both signs (ranks above and below the grid), so a change of
// summation order (chunks of 7 vs one of 20, checkpoint recomputation, another
// CPU's SIMD width) moves it by ~n * eps * sum|term|, not by eps * |gradient|:
// in float32 that is ~1e-6 absolute, the size of the old atol, and an AMD EPYC
// machine exceeded it. In float64 the same bound is ~1e-13; the tolerances
// below leave a 1e3 margin above it and stay 1e6 below what a real difference
// (a chunk dropped or counted twice, a gradient through the samples) makes.
TEST_CASE("Calibration penalty: chunked and checkpointed equals one chunk and the plain computation", "[calibration]") {
  auto flow = perturbed_flow();
  flow->to(torch::kFloat64);
  // The training steps left float32 gradients, which zero_grad() would keep (libtorch 1.13) and
  // backward would accumulate into: drop them so the gradients below are float64.
  for (auto& p : flow->parameters()) p.mutable_grad() = torch::Tensor();
  torch::manual_seed(3);
  auto theta = torch::randn({16, 2}, torch::kFloat64).pow(3);
  auto context = torch::randn({16, 3}, torch::kFloat64);
  for (bool conservative : {true, false}) {
    auto chunked = value_and_grads(flow, [&](const torch::Tensor& c) {
      return calibration_penalty(flow, theta, c, spec_with(conservative, 20, 7, 1.0));
    }, context);
    auto whole = value_and_grads(flow, [&](const torch::Tensor& c) {
      return calibration_penalty(flow, theta, c, spec_with(conservative, 20, 20, 1.0));
    }, context);
    auto plain = value_and_grads(flow, [&](const torch::Tensor& c) {
      auto true_lp = flow->log_prob(theta, c);
      torch::Tensor samples;
      {
        torch::NoGradGuard no_grad;
        samples = flow->sample(20, c).first;
      }
      auto sample_lp = flow->log_prob(samples.reshape({-1, 2}), c.repeat_interleave(20, 0)).reshape({16, 20});
      return rank_calibration_penalty(true_lp, sample_lp, spec_with(conservative, 20, 20, 1.0));
    }, context);
    REQUIRE(chunked.value > 0);
    REQUIRE(chunked.value == Approx(whole.value).epsilon(1e-10));
    REQUIRE(chunked.value == Approx(plain.value).epsilon(1e-10));
    double grad_norm = 0;
    for (size_t i = 0; i < chunked.grads.size(); ++i) {
      REQUIRE(chunked.grads[i].scalar_type() == torch::kFloat64);
      REQUIRE(torch::allclose(chunked.grads[i], whole.grads[i], 1e-9, 1e-10));
      REQUIRE(torch::allclose(chunked.grads[i], plain.grads[i], 1e-9, 1e-10));
      grad_norm += chunked.grads[i].norm().item<double>();
    }
    REQUIRE(grad_norm > 1e-3);
    REQUIRE(chunked.grads.back().norm().item<double>() > 0);  // reaches the context
  }
}

TEST_CASE("Calibration penalty is ~0 when calibrated, large when over-confident, one-sided when under-confident",
          "[calibration]") {
  // A fresh flow in eval mode is exactly N(0, I) for every context; draw the truth from N(0, scale^2 I).
  CouplingFlow flow(2, 3, small_spec(), 0);
  flow->eval();
  torch::manual_seed(5);
  auto context = torch::randn({400, 3});
  auto penalty = [&](double scale, bool conservative) {
    torch::NoGradGuard no_grad;
    return calibration_penalty(flow, torch::randn({400, 2}) * scale, context,
                               spec_with(conservative, 200, 64, 0.01)).item<double>();
  };
  REQUIRE(penalty(1.0, false) < 0.005);
  REQUIRE(penalty(1.0, true) < 0.005);
  REQUIRE(penalty(3.0, true) > 0.1);   // truth in the tails: coverage below nominal
  REQUIRE(penalty(0.3, true) == 0.0);  // truth near the mode: under-confident, not penalised
  REQUIRE(penalty(0.3, false) > 0.1);
}

TEST_CASE("Calibration penalty keeps no chunk's flow graph: one autograd node per chunk", "[calibration]") {
  auto flow = perturbed_flow();
  torch::manual_seed(4);
  auto theta = torch::randn({8, 2});
  auto context = torch::randn({8, 3}).requires_grad_(true);
  // 20 samples in chunks of 7 are 3 chunks, 40 are 6: three more checkpoint nodes and nothing else.
  auto three_chunks = calibration_penalty(flow, theta, context, spec_with(true, 20, 7, 1.0));
  auto six_chunks = calibration_penalty(flow, theta, context, spec_with(true, 40, 7, 1.0));
  REQUIRE(autograd_nodes(six_chunks) == autograd_nodes(three_chunks) + 3);
}

TEST_CASE("Ranks of exact posterior samples are uniform on the Gaussian toy, over-confidence is penalised",
          "[calibration]") {
  // Truths from the prior, S samples from the analytic posterior N(m, s^2 I),
  // or from an over-confident one N(m, (0.6 s)^2 I), each scored by its own density.
  GaussianToy toy(GaussianToyConfig{}, 23, torch::kCPU);
  std::vector<torch::Tensor> truths, means, stds;
  for (uint64_t batch = 0; batch < 8; ++batch) {  // n_obs drawn per batch from [5, 20]
    auto simulated = toy.sample(250, batch);
    auto posterior = toy.posterior(simulated.observations);
    truths.push_back(simulated.params);
    means.push_back(posterior.mean);
    stds.push_back(posterior.std);
  }
  const auto truth = torch::cat(truths).to(torch::kFloat64);
  const auto mean = torch::cat(means).to(torch::kFloat64);
  const int64_t n = truth.size(0);
  const int64_t s = 200;
  const auto spec = spec_with(true, s, s, 0.01);
  torch::manual_seed(7);
  auto ranks_and_penalty = [&](double std_factor) {
    const auto std = torch::cat(stds).to(torch::kFloat64) * std_factor;
    const auto samples = mean.unsqueeze(1) + std.unsqueeze(1) * torch::randn({n, s, 2}, torch::kFloat64);
    const auto true_lp = gaussian_log_prob(truth, mean, std);
    const auto sample_lp = gaussian_log_prob(samples, mean, std);
    return std::make_pair(straight_through_ranks(true_lp, sample_lp, spec.ste_temperature),
                          rank_calibration_penalty(true_lp, sample_lp, spec).item<double>());
  };
  // KS bound: the 0.1% critical value 1.95 / sqrt(N) plus 1 / S for ranks on a grid of S + 1 values.
  const double ks_bound = 1.95 / std::sqrt(static_cast<double>(n)) + 1.0 / s;

  const auto [exact_ranks, exact_penalty] = ranks_and_penalty(1.0);
  REQUIRE(exact_ranks.sizes().vec() == std::vector<int64_t>{n});
  const double exact_ks = rank_ks_distance(exact_ranks.unsqueeze(1)).item<double>();
  INFO("exact: KS " << exact_ks << " (bound " << ks_bound << "), penalty " << exact_penalty);
  REQUIRE(exact_ks < ks_bound);
  REQUIRE(exact_penalty < 1e-3);

  const auto [confident_ranks, confident_penalty] = ranks_and_penalty(0.6);
  const double confident_ks = rank_ks_distance(confident_ranks.unsqueeze(1)).item<double>();
  INFO("over-confident: KS " << confident_ks << ", penalty " << confident_penalty);
  // alpha = 1 - U^(1 / 0.36) for a 2-D Gaussian: KS and penalty far from the exact case's.
  REQUIRE(confident_ks > 0.2);
  REQUIRE(confident_penalty > 0.03);
}
