#include <catch2/catch.hpp>

#include "models/calibration_penalty.hpp"

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

TEST_CASE("Calibration penalty: chunked and checkpointed equals one chunk and the plain computation", "[calibration]") {
  auto flow = perturbed_flow();
  torch::manual_seed(3);
  auto theta = torch::randn({16, 2}).pow(3);
  auto context = torch::randn({16, 3});
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
        samples = flow->sample(20, c);
      }
      auto sample_lp = flow->log_prob(samples.reshape({-1, 2}), c.repeat_interleave(20, 0)).reshape({16, 20});
      return rank_calibration_penalty(true_lp, sample_lp, spec_with(conservative, 20, 20, 1.0));
    }, context);
    REQUIRE(chunked.value > 0);
    REQUIRE(chunked.value == Approx(whole.value).epsilon(1e-6));
    REQUIRE(chunked.value == Approx(plain.value).epsilon(1e-6));
    double grad_norm = 0;
    for (size_t i = 0; i < chunked.grads.size(); ++i) {
      REQUIRE(torch::allclose(chunked.grads[i], whole.grads[i], 1e-4, 1e-6));
      REQUIRE(torch::allclose(chunked.grads[i], plain.grads[i], 1e-4, 1e-6));
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
