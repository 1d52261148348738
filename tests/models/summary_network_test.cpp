#include <catch2/catch.hpp>

#include "models/networks/item_fit.hpp"
#include "models/networks/summary_network.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>

using namespace bfhpo::models;

namespace {

SummarySpec tiny_spec(double dropout = 0.0) {
  SummarySpec spec;
  spec.cell_dim = 6;
  spec.cell_mlp_width = 12;
  spec.cell_mlp_depth = 2;
  spec.embed_dim = 8;
  spec.attention_heads = 2;
  spec.attention_layers = 2;
  spec.summary_dim = 5;
  spec.dropout = dropout;
  return spec;
}

torch::Tensor random_responses(int64_t batch, int64_t persons, int64_t items) {
  return torch::bernoulli(torch::full({batch, persons, items}, 0.5));
}

struct Pass {
  SummaryOutput output;
  std::map<std::string, torch::Tensor> grads;
};

// Forward and backward of a fixed random linear functional of both outputs,
// after seeding the RNG (so dropout draws are reproducible).
Pass forward_backward(SummaryNetwork& net, const torch::Tensor& responses, uint64_t seed = 11,
                      const torch::Tensor& mask = {}) {
  net->zero_grad();
  torch::manual_seed(seed);
  auto out = net->forward(responses, mask);
  const auto w_items =
      torch::linspace(-1, 1, out.item_context.numel(), out.item_context.options()).view_as(out.item_context);
  const auto w_global = torch::linspace(1, -2, out.global.numel(), out.global.options()).view_as(out.global);
  ((out.item_context * w_items).sum() + (out.global * w_global).sum()).backward();
  Pass pass{{out.item_context.detach(), out.global.detach(), {}}, {}};
  for (const auto& p : net->named_parameters()) pass.grads[p.key()] = p.value().grad().clone();
  return pass;
}

// Elementwise |a - b| <= 1e-5 |b|, with a floor of 1e-12 of b's largest entry
// so that entries that are zero up to rounding compare too. Run in float64,
// where a correct computation differs by ~1e-15: a relative 1e-5 is a real test.
bool close_relative(const torch::Tensor& a, const torch::Tensor& b) {
  const double floor = 1e-12 * b.abs().max().item<double>();
  return ((a - b).abs() <= 1e-5 * b.abs() + floor).all().item<bool>();
}

void require_same(const Pass& a, const Pass& b) {
  REQUIRE(a.output.item_context.scalar_type() == torch::kFloat64);
  REQUIRE(close_relative(a.output.item_context, b.output.item_context));
  REQUIRE(close_relative(a.output.global, b.output.global));
  REQUIRE(a.grads.size() == b.grads.size());
  for (const auto& [name, grad] : a.grads) {
    INFO(name);
    REQUIRE(grad.abs().max().item<double>() > 0);
    REQUIRE(close_relative(grad, b.grads.at(name)));
  }
}

}  // namespace

TEST_CASE("SummaryNetwork output shapes", "[networks]") {
  torch::manual_seed(0);
  const auto spec = tiny_spec();
  SummaryNetwork net(spec);
  const auto out = net->forward(random_responses(3, 7, 4));
  REQUIRE(out.item_context.sizes().vec() == std::vector<int64_t>{3, 4, spec.embed_dim});
  REQUIRE(out.global.sizes().vec() == std::vector<int64_t>{3, spec.summary_dim});
  const auto condition = out.per_item_condition();
  REQUIRE(condition.sizes().vec() == std::vector<int64_t>{3, 4, spec.embed_dim + spec.summary_dim});
  REQUIRE(torch::equal(condition.slice(2, 0, spec.embed_dim), out.item_context));
  REQUIRE(torch::equal(condition.select(1, 2).slice(1, spec.embed_dim), out.global));
  REQUIRE_FALSE(out.item_fit.defined());
}

TEST_CASE("SummaryNetwork with the item fit: each item's fitted curve joins the condition", "[networks]") {
  torch::manual_seed(0);
  auto spec = tiny_spec();
  spec.item_fit = true;
  SummaryNetwork net(spec, MemoryConfig{}, 4);
  const auto y = torch::randint(0, 4, {3, 7, 5}).to(torch::kFloat32);
  const auto out = net->forward(y);
  REQUIRE(out.item_fit.sizes().vec() == std::vector<int64_t>{3, 5, 4});
  CHECK(torch::equal(out.item_fit, fit_items(y, torch::ones_like(y), 4)));
  const auto condition = out.per_item_condition();
  REQUIRE(condition.size(2) == spec.embed_dim + spec.summary_dim + 4);
  CHECK(torch::equal(condition.slice(2, spec.embed_dim + spec.summary_dim), out.item_fit));
}

TEST_CASE("SummaryNetwork is invariant to persons and equivariant to items", "[networks]") {
  torch::manual_seed(1);
  SummaryNetwork net(tiny_spec(0.2));
  net->eval();
  const auto y = random_responses(2, 9, 6);
  const auto out = net->forward(y);

  const auto persons = torch::randperm(9, torch::kLong);
  const auto by_persons = net->forward(y.index_select(1, persons));
  REQUIRE(torch::allclose(by_persons.item_context, out.item_context, 1e-4, 1e-5));
  REQUIRE(torch::allclose(by_persons.global, out.global, 1e-4, 1e-5));

  const auto items = torch::tensor(std::vector<int64_t>{3, 0, 5, 1, 4, 2});
  const auto by_items = net->forward(y.index_select(2, items));
  REQUIRE(torch::allclose(by_items.item_context, out.item_context.index_select(1, items), 1e-4, 1e-5));
  REQUIRE(torch::allclose(by_items.global, out.global, 1e-4, 1e-5));
  // Not vacuous: different items get different contexts.
  REQUIRE_FALSE(torch::allclose(by_items.item_context, out.item_context, 1e-4, 1e-5));
}

TEST_CASE("SummaryNetwork: each data set of a batch gets the outputs it gets alone", "[networks]") {
  // What the summary-space check relies on when it summarizes its simulated sets in batches.
  torch::manual_seed(5);
  auto spec = tiny_spec();
  spec.item_fit = true;
  SummaryNetwork net(spec, MemoryConfig{}, 4);
  net->to(torch::kFloat64);
  const auto y = torch::randint(0, 4, {3, 11, 5}).to(torch::kFloat64);
  const auto mask = torch::bernoulli(torch::full({3, 11, 5}, 0.85, torch::kFloat64));
  const auto together = net->forward(y, mask);
  for (int64_t b = 0; b < 3; ++b) {
    INFO("data set " << b);
    const auto alone = net->forward(y.narrow(0, b, 1), mask.narrow(0, b, 1));
    CHECK(close_relative(together.global.narrow(0, b, 1), alone.global));
    CHECK(close_relative(together.item_context.narrow(0, b, 1), alone.item_context));
    CHECK(close_relative(together.item_fit.narrow(0, b, 1), alone.item_fit));
  }
}

TEST_CASE("SummaryNetwork: chunked and checkpointed equal unchunked outputs and gradients to relative 1e-5",
          "[networks]") {
  torch::manual_seed(2);
  SummaryNetwork net(tiny_spec());
  net->to(torch::kFloat64);
  const auto y = random_responses(2, 5, 10);
  const auto reference = forward_backward(net, y);
  for (const int64_t chunk : {1, 3, 7, 10, 25}) {
    for (const bool checkpointing : {false, true}) {
      INFO("chunk " << chunk << ", checkpointing " << checkpointing);
      set_summary_memory_config(net, chunk, checkpointing);
      REQUIRE(net->memory_config().item_chunk_size == chunk);
      require_same(forward_backward(net, y), reference);
    }
  }
}

TEST_CASE("SummaryNetwork: with graded responses and missing cells, chunked and checkpointed equal unchunked",
          "[networks]") {
  for (const auto& [k, item_fit] : {std::pair{2, false}, std::pair{5, false}, std::pair{5, true}}) {
    INFO("K = " << k << (item_fit ? ", with the item fit" : ""));
    torch::manual_seed(4);
    auto spec = tiny_spec();
    spec.item_fit = item_fit;
    SummaryNetwork net(spec, MemoryConfig{}, k);
    net->to(torch::kFloat64);
    const auto mask = torch::bernoulli(torch::full({2, 6, 9}, 0.7, torch::kFloat64));
    const auto y = torch::randint(0, k, {2, 6, 9}, torch::kFloat64) * mask;
    const auto reference = forward_backward(net, y, 11, mask);
    for (const int64_t chunk : {1, 4, 9}) {
      for (const bool checkpointing : {false, true}) {
        INFO("chunk " << chunk << ", checkpointing " << checkpointing);
        set_summary_memory_config(net, chunk, checkpointing);
        require_same(forward_backward(net, y, 11, mask), reference);
      }
    }
  }
}

TEST_CASE("SummaryNetwork: person chunks, alone and within item chunks, equal unchunked outputs and gradients",
          "[networks]") {
  for (const int64_t k : {2, 4}) {
    INFO("K = " << k);
    torch::manual_seed(6);
    SummaryNetwork net(tiny_spec(), MemoryConfig{}, k);
    net->to(torch::kFloat64);
    // 11 persons: chunks of 4 leave a last chunk of 3; a person who answered nothing, an item nobody answered.
    auto mask = torch::bernoulli(torch::full({2, 11, 7}, 0.75, torch::kFloat64));
    mask.select(1, 5).zero_();
    mask.select(2, 2).select(0, 1).zero_();
    const auto y = torch::randint(0, k, {2, 11, 7}, torch::kFloat64) * mask;
    const auto reference = forward_backward(net, y, 13, mask);
    for (const std::optional<int64_t> item_chunk : {std::optional<int64_t>{}, std::optional<int64_t>{3}}) {
      for (const int64_t person_chunk : {1, 4, 11, 30}) {
        for (const bool checkpointing : {false, true}) {
          INFO("item chunk " << item_chunk.value_or(0) << ", person chunk " << person_chunk << ", checkpointing "
                             << checkpointing);
          net->set_memory_config(MemoryConfig{item_chunk, checkpointing, person_chunk});
          require_same(forward_backward(net, y, 13, mask), reference);
        }
      }
    }
  }
}

TEST_CASE("SummaryNetwork: a missing cell's response is never read, the mask is", "[networks]") {
  const bool item_fit = GENERATE(false, true);
  INFO((item_fit ? "with the item fit" : "without the item fit"));
  torch::manual_seed(5);
  auto spec = tiny_spec();
  spec.item_fit = item_fit;
  SummaryNetwork net(spec, MemoryConfig{}, 4);
  net->eval();
  const auto mask = torch::bernoulli(torch::full({2, 8, 5}, 0.6));
  const auto y = torch::randint(0, 4, {2, 8, 5}).to(torch::kFloat32);
  const auto out = net->forward(y * mask, mask);
  // Anything in the missing cells: the same summary.
  const auto noise = torch::randint(0, 4, {2, 8, 5}).to(torch::kFloat32) * (1 - mask);
  const auto filled = net->forward(y * mask + noise, mask);
  REQUIRE(noise.abs().sum().item<double>() > 0);
  CHECK(torch::allclose(filled.item_context, out.item_context, 1e-5, 1e-6));
  CHECK(torch::allclose(filled.global, out.global, 1e-5, 1e-6));
  // The same responses read as complete data give another summary.
  const auto complete = net->forward(y * mask);
  CHECK_FALSE(torch::allclose(complete.item_context, out.item_context, 1e-4, 1e-5));
  // No mask is the all-ones mask.
  const auto ones = net->forward(y, torch::ones_like(y));
  CHECK(torch::allclose(net->forward(y).item_context, ones.item_context, 1e-6, 1e-7));
  // Persons stay exchangeable with a mask.
  const auto persons = torch::randperm(8, torch::kLong);
  const auto permuted = net->forward((y * mask).index_select(1, persons), mask.index_select(1, persons));
  CHECK(torch::allclose(permuted.item_context, out.item_context, 1e-4, 1e-5));
}

TEST_CASE("SummaryNetwork: checkpointing keeps gradients with dropout in training", "[networks]") {
  torch::manual_seed(3);
  SummaryNetwork net(tiny_spec(0.3));
  net->to(torch::kFloat64);
  net->train();
  const auto y = random_responses(2, 6, 7);
  for (const std::optional<int64_t> chunk : {std::optional<int64_t>{}, std::optional<int64_t>{3}}) {
    INFO("chunk " << chunk.value_or(0));
    set_summary_memory_config(net, chunk, false);
    const auto plain = forward_backward(net, y);
    REQUIRE_FALSE(torch::equal(plain.output.global, forward_backward(net, y, 12).output.global));
    set_summary_memory_config(net, chunk, true);
    require_same(forward_backward(net, y), plain);
  }
}

TEST_CASE("SummaryNetwork rejects a non-positive item chunk", "[networks]") {
  SummaryNetwork net(tiny_spec());
  REQUIRE_THROWS_AS(set_summary_memory_config(net, 0, true), std::invalid_argument);
  REQUIRE_THROWS_AS(SummaryNetwork(tiny_spec(), MemoryConfig{-2, false, std::nullopt}), std::invalid_argument);
  REQUIRE_THROWS_AS(SummaryNetwork(tiny_spec(), MemoryConfig{std::nullopt, true, 0}), std::invalid_argument);
}
