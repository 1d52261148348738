#include <catch2/catch.hpp>

#include "models/networks/mlp.hpp"

#include <stdexcept>
#include <vector>

using namespace bfhpo::models;

TEST_CASE("RunningStandardization matches batch statistics and freezes in eval", "[networks]") {
  torch::manual_seed(0);
  RunningStandardization norm(3);
  auto a = torch::randn({50, 3}) * 2 + 1;
  auto b = torch::randn({4, 20, 3}) * 0.5 - 3;
  norm->forward(a);
  norm->forward(b);
  auto all = torch::cat({a, b.reshape({-1, 3})});
  REQUIRE(torch::allclose(norm->mean(), all.mean(0), 1e-5, 1e-5));
  REQUIRE(torch::allclose(norm->std(), all.std(0), 1e-5, 1e-5));
  norm->eval();
  auto before = norm->mean().clone();
  auto z = norm->forward(torch::randn({10, 3}) * 10);
  REQUIRE(torch::equal(before, norm->mean()));
  REQUIRE(torch::allclose(norm->inverse(z), z * all.std(0) + all.mean(0), 1e-4, 1e-4));
  REQUIRE(norm->log_det_jacobian().item<double>() ==
          Approx(-all.std(0).log().sum().item<double>()).epsilon(1e-5));
}

TEST_CASE("Mlp residual adds its input and eval mode disables dropout", "[networks]") {
  torch::manual_seed(1);
  Mlp mlp(MlpOptions{4, {4, 4, 2}, Activation::relu, 0.5, true});
  mlp->eval();
  auto x = torch::randn({8, 4});
  REQUIRE(torch::equal(mlp->forward(x), mlp->forward(x)));
  REQUIRE(mlp->forward(x).sizes().vec() == std::vector<int64_t>{8, 2});
  mlp->train();
  REQUIRE_FALSE(torch::equal(mlp->forward(x), mlp->forward(x)));
}

TEST_CASE("Mlp forward_shared equals forward of the rows with their shared inputs repeated", "[networks]") {
  torch::manual_seed(4);
  for (const auto& widths : {std::vector<int64_t>{6, 6, 3}, std::vector<int64_t>{3}}) {
    Mlp mlp(MlpOptions{5, widths, Activation::silu, 0.0, false});
    mlp->to(torch::kFloat64);  // in double the two orders of the first layer's sums agree to ~1e-15
    const auto x = torch::randn({4 * 7, 2}, torch::kFloat64);
    const auto shared = torch::randn({4, 3}, torch::kFloat64);
    const auto expected = mlp->forward(torch::cat({x, shared.repeat_interleave(7, 0)}, 1));
    INFO("layers " << widths.size());
    REQUIRE(torch::allclose(mlp->forward_shared(x, shared, 7), expected, 1e-12, 1e-12));
  }
  Mlp mlp(MlpOptions{5, {3}, Activation::silu, 0.0, false});
  REQUIRE_THROWS_AS(mlp->forward_shared(torch::randn({6, 2}), torch::randn({4, 3}), 2), std::invalid_argument);
  Mlp residual(MlpOptions{5, {5, 3}, Activation::silu, 0.0, true});
  REQUIRE_THROWS_AS(residual->forward_shared(torch::randn({6, 2}), torch::randn({3, 3}), 2), std::logic_error);
}
