#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "models/approximator_spec.hpp"

using bfhpo::UserError;
using namespace bfhpo::models;
using nlohmann::json;

TEST_CASE("ApproximatorSpec JSON round-trips every field", "[spec]") {
  ApproximatorSpec spec;
  spec.summary.embed_dim = 48;
  spec.summary.attention_heads = 6;
  spec.summary.activation = Activation::gelu;
  spec.flow.depth = 3;
  spec.flow.clamp = 2.5;
  spec.calibration.enabled = true;
  spec.calibration.n_post_samples = 77;
  spec.memory.item_chunk_size = 5;
  spec.memory.gradient_checkpointing = true;
  const json out = to_json(spec);
  const ApproximatorSpec back = approximator_spec_from_json(out, "spec.json");
  REQUIRE(to_json(back) == out);
  REQUIRE(back.summary.activation == Activation::gelu);
  REQUIRE(back.memory.item_chunk_size == std::optional<int64_t>(5));
  REQUIRE(out.at("memory").at("item_chunk_size") == 5);

  spec.memory.item_chunk_size.reset();
  REQUIRE(to_json(spec).at("memory").at("item_chunk_size").is_null());
  REQUIRE_FALSE(approximator_spec_from_json(to_json(spec), "spec.json").memory.item_chunk_size);
}

TEST_CASE("ApproximatorSpec accepts dotted and nested keys alike", "[spec]") {
  const auto nested = approximator_spec_from_json(json::parse(R"({"flow": {"depth": 4}, "summary": {"dropout": 0.1}})"), "f");
  const auto dotted = approximator_spec_from_json(json::parse(R"({"flow.depth": 4, "summary.dropout": 0.1})"), "f");
  REQUIRE(to_json(nested) == to_json(dotted));
  REQUIRE(nested.flow.depth == 4);
  REQUIRE(to_json(nested) != to_json(ApproximatorSpec{}));
}

TEST_CASE("ApproximatorSpec errors name the file, the field and the fix", "[spec]") {
  const auto message = [](const char* text) {
    try {
      approximator_spec_from_json(json::parse(text), "study.json");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string misspelt = message(R"({"summary": {"embd_dim": 8}})");
  REQUIRE_THAT(misspelt, Catch::Contains("study.json") && Catch::Contains("summary.embd_dim") &&
                             Catch::Contains("summary.embed_dim"));
  REQUIRE_THAT(message(R"({"flow": {"depth": "four"}})"), Catch::Contains("flow.depth") && Catch::Contains("integer"));
  REQUIRE_THAT(message(R"({"summary": {"embed_dim": 10, "attention_heads": 4}})"),
               Catch::Contains("summary.attention_heads") && Catch::Contains("divide"));
  REQUIRE_THAT(message(R"({"memory": {"item_chunk_size": 0}})"), Catch::Contains("memory.item_chunk_size"));
  REQUIRE_THAT(message(R"({"flow": {"activation": "tanh"}})"), Catch::Contains("flow.activation"));
  REQUIRE_THAT(message(R"({"summary": {"dropout": 1.5}})"), Catch::Contains("summary.dropout"));
}
