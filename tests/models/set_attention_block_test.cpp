#include <catch2/catch.hpp>

#include "models/networks/set_attention_block.hpp"

using namespace bfhpo::models;

TEST_CASE("SetAttentionBlock is permutation equivariant and mixes the set", "[networks]") {
  torch::manual_seed(0);
  SetAttentionBlock block(SetAttentionBlockOptions{6, 3, 0.0, Activation::silu});
  const auto x = torch::randn({2, 5, 6});
  const auto out = block->forward(x);
  REQUIRE(out.sizes() == x.sizes());
  const auto perm = torch::tensor(std::vector<int64_t>{4, 2, 0, 1, 3});
  REQUIRE(torch::allclose(block->forward(x.index_select(1, perm)), out.index_select(1, perm), 1e-5, 1e-6));
  // Each element's output depends on the other elements.
  auto changed = x.clone();
  changed[0][4] += 1.0;
  REQUIRE_FALSE(torch::allclose(block->forward(changed)[0][0], out[0][0], 1e-5, 1e-6));
}

TEST_CASE("SetAttentionBlock rejects heads that do not divide the width", "[networks]") {
  REQUIRE_THROWS_AS(SetAttentionBlock(SetAttentionBlockOptions{6, 4, 0.0, Activation::silu}),
                    std::invalid_argument);
}
