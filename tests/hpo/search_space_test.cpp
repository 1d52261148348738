#include "common/user_error.hpp"
#include "hpo/search_space.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

json demo_space() {
  return json::parse(R"({
    "lr":    {"type": "float", "low": 1e-4, "high": 1e-1, "log": true},
    "drop":  {"type": "float", "low": 0.0, "high": 0.5, "step": 0.1},
    "depth": {"type": "int", "low": 2, "high": 8},
    "width": {"type": "int", "low": 16, "high": 256, "log": true},
    "kind":  {"type": "categorical", "choices": ["a", "b", true, 3]},
    "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}},
    "fancy": {"type": "categorical", "choices": [1, 2], "when": {"heads": [2, 4]}}})");
}

std::string error_of(const json& space) {
  try {
    SearchSpace::from_json(space, "study.json");
  } catch (const bfhpo::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every distribution round-trips through Optuna's JSON") {
  SearchSpace space = SearchSpace::from_json(demo_space(), "study.json");
  for (const auto& p : space.params()) {
    std::string text = distribution_to_optuna_json(p.distribution);
    CHECK(distribution_from_optuna_json(text) == p.distribution);
  }
  auto lr = std::get<FloatDistribution>(space.find("lr")->distribution);
  CHECK(json::parse(distribution_to_optuna_json(lr)) ==
        json::parse(R"({"name":"FloatDistribution","attributes":{"step":null,"low":0.0001,"high":0.1,"log":true}})"));
}

TEST_CASE("categorical values are stored as the index of the choice") {
  SearchSpace space = SearchSpace::from_json(demo_space(), "study.json");
  const Distribution& kind = space.find("kind")->distribution;
  CHECK(to_internal(kind, "b") == 1.0);
  CHECK(to_internal(kind, true) == 2.0);
  CHECK(to_internal(kind, 3) == 3.0);
  CHECK(to_external(kind, 2.0) == json(true));
  CHECK_THROWS_AS(to_internal(kind, "z"), std::invalid_argument);
}

TEST_CASE("parents come before children and conditions decide which params exist") {
  SearchSpace space = SearchSpace::from_json(demo_space(), "study.json");
  std::vector<std::string> order;
  for (const auto& p : space.params()) order.push_back(p.name);
  auto pos = [&](const std::string& n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  CHECK(pos("kind") < pos("heads"));
  CHECK(pos("heads") < pos("fancy"));

  Params a{{"lr", 0.01}, {"drop", 0.2}, {"depth", 3}, {"width", 32}, {"kind", 0}};
  CHECK(space.is_valid_assignment(a));
  Params b = a;
  b["kind"] = 1;
  CHECK_FALSE(space.is_valid_assignment(b));  // heads is active but missing
  b["heads"] = 4;
  CHECK_FALSE(space.is_valid_assignment(b));  // fancy is active but missing
  b["fancy"] = 0;
  CHECK(space.is_valid_assignment(b));
  b["heads"] = 3;
  CHECK_FALSE(space.is_valid_assignment(b));  // fancy now inactive but present
  Params off_grid = a;
  off_grid["drop"] = 0.25;
  CHECK_FALSE(space.is_valid_assignment(off_grid));
}

TEST_CASE("external params convert to internal and back") {
  SearchSpace space = SearchSpace::from_json(demo_space(), "study.json");
  json external = {{"lr", 0.01}, {"drop", 0.2}, {"depth", 3}, {"width", 32}, {"kind", "b"}, {"heads", 2}, {"fancy", 2}};
  Params params = space.from_external(external, "params.json");
  CHECK(params.at("kind") == 1.0);
  CHECK(space.to_external(params) == external);
  json inactive = external;
  inactive["kind"] = "a";
  CHECK_THROWS_WITH(space.from_external(inactive, "params.json"), Catch::Contains("params.heads"));
}

TEST_CASE("malformed search spaces name the file, the field and the fix") {
  auto with = [](const char* name, const char* spec) {
    json space = json::parse(R"({"x": {"type": "float", "low": 0, "high": 1}})");
    space[name] = json::parse(spec);
    return space;
  };
  std::string e = error_of(with("lr", R"({"type": "float", "low": 1, "high": 1})"));
  CHECK_THAT(e, Catch::Contains("study.json") && Catch::Contains("search_space.lr.low") && Catch::Contains("Fix:"));
  CHECK_THAT(error_of(with("lr", R"({"type": "float", "low": 0, "high": 1, "log": true})")),
             Catch::Contains("log-scaled"));
  CHECK_THAT(error_of(with("lr", R"({"type": "float", "high": 1})")), Catch::Contains("search_space.lr.low"));
  CHECK_THAT(error_of(with("lr", R"({"type": "normal", "low": 0, "high": 1})")), Catch::Contains("unknown value \"normal\""));
  CHECK_THAT(error_of(with("h", R"({"type": "int", "low": 1, "high": 4, "when": {"nope": 1}})")),
             Catch::Contains("search_space.h.when") && Catch::Contains("'nope'"));
  CHECK_THAT(error_of(with("h", R"({"type": "int", "low": 1, "high": 4, "hihg": 3})")),
             Catch::Contains("search_space.h.hihg"));
  CHECK_THAT(error_of(with("c", R"({"type": "categorical", "choices": []})")), Catch::Contains("search_space.c.choices"));
  CHECK_THAT(error_of(with("i", R"({"type": "int", "low": 1.5, "high": 4})")), Catch::Contains("integer"));
  json cycle = json::parse(R"({"a": {"type": "categorical", "choices": [1, 2], "when": {"b": 1}},
                               "b": {"type": "categorical", "choices": [1, 2], "when": {"a": 1}}})");
  CHECK_THAT(error_of(cycle), Catch::Contains("cycle"));
}

TEST_CASE("value_at_quantile is the prior's inverse CDF: monotone, from low to high, every grid value reachable") {
  const std::vector<Distribution> distributions{
      FloatDistribution{-2, 3, false, std::nullopt}, FloatDistribution{1e-4, 1, true, std::nullopt},
      FloatDistribution{0, 1, false, 0.25},          IntDistribution{1, 64, true, 1},
      IntDistribution{0, 10, false, 5},              CategoricalDistribution{{"a", "b", "c"}}};
  for (const auto& d : distributions) {
    std::set<double> reached;
    double previous = -INFINITY;
    for (int i = 0; i < 10000; ++i) {
      const double v = value_at_quantile(d, i / 10000.0);
      CHECK(v >= previous);
      CHECK(contains(d, v));
      previous = v;
      reached.insert(v);
    }
    CHECK(value_at_quantile(d, 0.0) == *reached.begin());
    CHECK(value_at_quantile(d, 1.0) >= previous);
    CHECK(contains(d, value_at_quantile(d, 1.0)));
    if (const auto* f = std::get_if<FloatDistribution>(&d)) CHECK(value_at_quantile(d, 1.0) == Approx(f->high));
    if (std::holds_alternative<CategoricalDistribution>(d)) CHECK(reached.size() == 3);
    if (const auto* f = std::get_if<FloatDistribution>(&d); f && f->step) CHECK(reached.size() == 5);
    if (const auto* i = std::get_if<IntDistribution>(&d); i && !i->log) CHECK(reached == std::set<double>{0, 5, 10});
    if (const auto* i = std::get_if<IntDistribution>(&d); i && i->log) CHECK(reached.size() == 64);
  }
  CHECK(value_at_quantile(FloatDistribution{1e-4, 1, true, std::nullopt}, 0.5) == Approx(1e-2));
}

TEST_CASE("a step range that is not a whole number of steps is refused with the high Optuna would use") {
  const auto space = [](const char* spec) { return json::parse(std::string(R"({"x": )") + spec + "}"); };
  CHECK_THAT(error_of(space(R"({"type": "float", "low": 0, "high": 1, "step": 0.3})")),
             Catch::Contains("search_space.x.high") && Catch::Contains("shrink high to 0.9"));
  CHECK_THAT(error_of(space(R"({"type": "float", "low": 0, "high": 1, "step": 2})")),
             Catch::Contains("search_space.x.step") && Catch::Contains("exceeds the range"));
  CHECK_THAT(error_of(space(R"({"type": "int", "low": 0, "high": 10, "step": 3})")),
             Catch::Contains("shrink high to 9"));
  CHECK_THAT(error_of(space(R"({"type": "int", "low": 1, "high": 3, "step": 5})")), Catch::Contains("exceeds the range"));
  // Ranges that are whole numbers of steps, including decimal steps a double cannot hold exactly.
  for (const char* ok : {R"({"type": "float", "low": 0, "high": 1, "step": 0.1})",
                         R"({"type": "float", "low": 0.1, "high": 0.7, "step": 0.2})",
                         R"({"type": "float", "low": -1, "high": 1, "step": 0.25})",
                         R"({"type": "int", "low": 2, "high": 10, "step": 4})"})
    CHECK(error_of(space(ok)).empty());
}

TEST_CASE("a condition on a continuous float parent or on a value the parent never takes is refused") {
  CHECK_THAT(error_of(json::parse(R"({"x": {"type": "float", "low": 0, "high": 1},
                                      "h": {"type": "int", "low": 1, "high": 3, "when": {"x": 0.5}}})")),
             Catch::Contains("search_space.h.when") && Catch::Contains("continuous float"));
  CHECK_THAT(error_of(json::parse(R"({"n": {"type": "int", "low": 1, "high": 3},
                                      "h": {"type": "int", "low": 1, "high": 3, "when": {"n": 9}}})")),
             Catch::Contains("not a value of 'n'"));
  // A float on a grid takes its grid values.
  CHECK(error_of(json::parse(R"({"x": {"type": "float", "low": 0, "high": 1, "step": 0.5},
                                 "h": {"type": "int", "low": 1, "high": 3, "when": {"x": 0.5}}})")).empty());
}

TEST_CASE("unknown keys in a parameter name the closest valid key; a type error names the expected type") {
  CHECK_THAT(error_of(json::parse(R"({"x": {"type": "float", "low": 0, "high": 1, "logg": true}})")),
             Catch::Contains("search_space.x.logg") && Catch::Contains("did you mean 'search_space.x.log'"));
  CHECK_THAT(error_of(json::parse(R"({"x": {"type": "categorical", "choices": [1], "low": 0}})")),
             Catch::Contains("search_space.x.low") && Catch::Contains("unknown key"));
  CHECK_THAT(error_of(json::parse(R"({"x": {"type": "int", "low": "1", "high": 3}})")),
             Catch::Contains("search_space.x.low") && Catch::Contains("expected an integer, got a string"));
}

TEST_CASE("check_compatible refuses what Optuna refuses and accepts a changed range") {
  const SearchSpace recorded_space = SearchSpace::from_json(demo_space(), "study.json");
  FrozenTrial trial;
  trial.number = 4;
  for (const auto& p : recorded_space.params()) trial.distributions[p.name] = p.distribution;
  const std::vector<FrozenTrial> trials{trial};
  const auto error_with = [&](const char* name, const char* spec) {
    json space = demo_space();
    space[name] = json::parse(spec);
    try {
      SearchSpace::from_json(space, "study.json").check_compatible(trials, "study.json");
    } catch (const bfhpo::UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_with("lr", R"({"type": "categorical", "choices": [0.1, 0.01]})"),
             Catch::Contains("search_space.lr") && Catch::Contains("trial 4 recorded as float, now categorical"));
  CHECK_THAT(error_with("lr", R"({"type": "float", "low": 1e-4, "high": 1e-1})"), Catch::Contains("log scale"));
  CHECK_THAT(error_with("kind", R"({"type": "categorical", "choices": ["a", "b", "c"]})"), Catch::Contains("choices"));
  CHECK(error_with("lr", R"({"type": "float", "low": 1e-5, "high": 1, "log": true})").empty());
  CHECK(error_with("depth", R"({"type": "int", "low": 1, "high": 20})").empty());
}
