#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "models/simulators/simulator_spec.hpp"

#include <string>

using bfhpo::ConfigSection;
using bfhpo::UserError;
using namespace bfhpo::models;
using nlohmann::json;

namespace {

SimulatorSpec read(const std::string& text) {
  const json document = json::parse(text);
  return simulator_spec_from_config(ConfigSection(document, "study.json", "simulator"));
}

// The UserError's message for `text`, or "" when it is accepted.
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("SimulatorSpec: each model with its priors round-trips through JSON", "[simulator]") {
  const SimulatorSpec grm = read(R"({"model": "grm", "n_categories": 5, "n_items": [10, 20], "n_persons": 300,
      "missing": [0, 0.3], "priors": {"log_a": {"mean": 0.1, "sd": 0.4}, "thresholds": {"sd": 1.5}}})");
  CHECK(grm.model == "grm");
  CHECK(grm.n_categories == 5);
  CHECK(grm.ranges.min_items == 10);
  CHECK(grm.ranges.max_persons == 300);
  CHECK(grm.missing.low == 0.0);
  CHECK(grm.missing.high == 0.3);
  CHECK(grm.priors.log_a.mean == 0.1);
  CHECK(grm.priors.thresholds.sd == 1.5);
  CHECK(grm.priors.thresholds.mean == 0.0);
  CHECK(read(grm.to_json().dump()).to_json() == grm.to_json());

  const SimulatorSpec three = read(R"({"model": "3pl", "missing": 0.1, "priors": {"c": {"alpha": 4, "beta": 16}}})");
  CHECK(three.priors.c.alpha == 4);
  CHECK(three.missing.low == 0.1);
  CHECK(three.missing.high == 0.1);
  CHECK(read(three.to_json().dump()).to_json() == three.to_json());
  CHECK(read(R"({})").model == "2pl");
  CHECK(read(R"({"model": "rasch"})").to_json().at("priors").size() == 1);
}

TEST_CASE("SimulatorSpec: bad input names the file, the field and the fix", "[simulator]") {
  struct Case {
    std::string text, field, says;
  };
  const Case cases[] = {
      {R"({"model": "2p1"})", "simulator.model", "did you mean \"2pl\""},
      {R"({"model": "graded"})", "simulator.model", "\"rasch\""},
      {R"({"model": "grm"})", "simulator.n_categories", "needs its number of categories"},
      {R"({"model": "grm", "n_categories": 1})", "simulator.n_categories", "[2, 100]"},
      {R"({"model": "2pl", "n_categories": 4})", "simulator.n_categories", "binary responses"},
      {R"({"missing": 1.0})", "simulator.missing", "[0, 1)"},
      {R"({"missing": -0.1})", "simulator.missing", "[0, 1)"},
      {R"({"missing": [0.3, 0.1]})", "simulator.missing", "low > high"},
      {R"({"missing": [0, 1]})", "simulator.missing[1]", "[0, 1)"},
      {R"({"priors": {"b": {"sd": 0}}})", "simulator.priors.b.sd", "must be positive"},
      {R"({"priors": {"log_a": {"sd": -1}}})", "simulator.priors.log_a.sd", "must be positive"},
      {R"({"model": "3pl", "priors": {"c": {"alpha": 0}}})", "simulator.priors.c.alpha", "must be positive"},
      {R"({"model": "3pl", "priors": {"c": {"alpha": 5, "gamma": 2}}})", "simulator.priors.c.gamma", "alpha"},
      {R"({"model": "2pl", "priors": {"c": {"alpha": 5}}})", "simulator.priors.c", "did you mean"},
      {R"({"model": "rasch", "priors": {"log_a": {"sd": 1}}})", "simulator.priors.log_a", "did you mean 'simulator.priors.b'"},
      {R"({"n_item": [1, 2]})", "simulator.n_item", "did you mean 'simulator.n_items'"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const std::string message = error_of(c.text);
    CHECK_THAT(message, Catch::Contains("study.json") && Catch::Contains(c.field) && Catch::Contains(c.says) &&
                            Catch::Contains("Fix:"));
  }
}
