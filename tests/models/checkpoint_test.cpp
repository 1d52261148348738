#include <catch2/catch.hpp>

#include "models/networks/checkpoint.hpp"
#include "models/networks/mlp.hpp"

using namespace bfhpo::models;

namespace {

struct Run {
  torch::Tensor output;
  std::vector<torch::Tensor> grads;  // inputs' grads, then the parameters'
  torch::Tensor draw_after_backward;
};

bool same_grads(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (a[i].defined() && !torch::allclose(a[i], b[i], 1e-5, 1e-6)) return false;
  }
  return true;
}

std::vector<torch::Tensor> grads_of(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> grads;
  for (const auto& t : tensors) grads.push_back(t.grad().defined() ? t.grad().clone() : torch::Tensor());
  return grads;
}

Mlp dropout_mlp(int64_t in, int64_t out) {
  Mlp mlp(MlpOptions{in, {8, 8, out}, Activation::silu, 0.3, false});
  mlp->train();
  return mlp;
}

}  // namespace

TEST_CASE("checkpoint gives fn's output and gradients, dropout drawing the same mask", "[networks]") {
  torch::manual_seed(0);
  auto mlp = dropout_mlp(3, 2);
  const auto x0 = torch::randn({6, 3});
  const auto weight = torch::randn({6, 2});
  const auto params = mlp->parameters();
  const CheckpointedFn fn = [&](const std::vector<torch::Tensor>& in) { return mlp->forward(in[0]); };

  auto run = [&](bool checkpointed, uint64_t seed) {
    mlp->zero_grad();
    auto x = x0.clone().requires_grad_(true);
    torch::manual_seed(seed);
    auto out = checkpointed ? checkpoint(fn, {x}, params) : fn({x});
    (out * weight).sum().backward();
    std::vector<torch::Tensor> leaves{x};
    leaves.insert(leaves.end(), params.begin(), params.end());
    return Run{out.detach(), grads_of(leaves), torch::rand({8})};
  };

  const auto plain = run(false, 42);
  const auto ckpt = run(true, 42);
  REQUIRE_FALSE(torch::equal(plain.output, run(false, 43).output));  // dropout is active
  REQUIRE(torch::equal(plain.output, ckpt.output));
  REQUIRE(same_grads(plain.grads, ckpt.grads));
  // The recomputation's RNG draws do not leak into the caller's stream.
  REQUIRE(torch::equal(plain.draw_after_backward, ckpt.draw_after_backward));
}

TEST_CASE("checkpoint composes: chained and combined checkpointed calls", "[networks]") {
  torch::manual_seed(1);
  auto first = dropout_mlp(3, 4);
  auto second = dropout_mlp(4 + 2, 1);
  const auto x0 = torch::randn({5, 3});
  const auto y0 = torch::randn({5, 2});
  const CheckpointedFn f = [&](const std::vector<torch::Tensor>& in) { return first->forward(in[0]); };
  const CheckpointedFn g = [&](const std::vector<torch::Tensor>& in) {
    return second->forward(torch::cat({in[0], in[1]}, 1));
  };

  auto run = [&](bool checkpointed) {
    first->zero_grad();
    second->zero_grad();
    auto x = x0.clone().requires_grad_(true);
    auto y = y0.clone().requires_grad_(true);
    torch::manual_seed(7);
    auto h = checkpointed ? checkpoint(f, {x}, first->parameters()) : f({x});
    auto z = checkpointed ? checkpoint(g, {h, y}, second->parameters()) : g({h, y});
    (z.sum() + (h * h).sum()).backward();
    std::vector<torch::Tensor> leaves{x, y};
    for (const auto& p : first->parameters()) leaves.push_back(p);
    for (const auto& p : second->parameters()) leaves.push_back(p);
    return Run{z.detach(), grads_of(leaves), torch::rand({8})};
  };

  const auto plain = run(false);
  const auto ckpt = run(true);
  REQUIRE(torch::equal(plain.output, ckpt.output));
  REQUIRE(same_grads(plain.grads, ckpt.grads));
  REQUIRE(torch::equal(plain.draw_after_backward, ckpt.draw_after_backward));
}

TEST_CASE("checkpoint keeps no activations and skips what needs no gradient", "[networks]") {
  torch::manual_seed(2);
  torch::nn::Linear used(3, 2);
  torch::nn::Linear unused(3, 2);
  const auto x = torch::randn({4, 3});  // requires no grad
  const CheckpointedFn fn = [&](const std::vector<torch::Tensor>& in) { return torch::tanh(used(in[0])); };
  std::vector<torch::Tensor> params = used->parameters();
  for (const auto& p : unused->parameters()) params.push_back(p);

  auto out = checkpoint(fn, {x}, params);
  REQUIRE(torch::equal(out, fn({x}).detach()));
  // The output hangs directly off the parameters: fn's intermediates are not in the graph.
  size_t parameter_edges = 0;
  for (const auto& edge : out.grad_fn()->next_edges()) {
    if (!edge.is_valid()) continue;  // x
    REQUIRE(edge.function->name() == "torch::autograd::AccumulateGrad");
    ++parameter_edges;
  }
  REQUIRE(parameter_edges == params.size());
  out.sum().backward();
  auto reference = used->weight.detach().requires_grad_(true);
  torch::tanh(torch::nn::functional::linear(x, reference, used->bias.detach())).sum().backward();
  REQUIRE(torch::allclose(used->weight.grad(), reference.grad(), 1e-5, 1e-6));
  REQUIRE_FALSE(unused->weight.grad().defined());

  torch::NoGradGuard no_grad;
  REQUIRE(checkpoint(fn, {x}, params).grad_fn() == nullptr);
}
