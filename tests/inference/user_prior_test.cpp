#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "inference/user_prior.hpp"
#include "tests/models/tiny_spec.hpp"

#include <cstdio>
#include <fstream>
#include <string>

using namespace bfhpo;

TEST_CASE("user_priors: NAME=family(x, y) values over the trained priors, later ones winning", "[user_prior]") {
  const auto grm = test::simulator_at({5, 5, 100, 100}, "grm", 4);
  const auto priors = inference::user_priors({"log_a=normal(0.2, 0.3)", " thresholds = normal( -0.5 ,2 ) ",
                                              "log_a=normal(0.1,0.4)"},
                                             grm);
  CHECK(priors.log_a.mean == 0.1);
  CHECK(priors.log_a.sd == 0.4);
  CHECK(priors.thresholds.mean == -0.5);
  CHECK(priors.thresholds.sd == 2.0);
  auto spec = grm;
  spec.priors = priors;
  CHECK(inference::prior_text(spec) == "log_a ~ N(0.1, 0.4), thresholds ~ N(-0.5, 2)");
  const auto three = test::simulator_at({5, 5, 100, 100}, "3pl");
  CHECK(inference::user_priors({"c=beta(4, 16)"}, three).c.alpha == 4.0);
}

TEST_CASE("user_priors: a value that is no prior says the syntax, a misspelt name the closest", "[user_prior]") {
  const auto two = test::simulator_at({5, 5, 100, 100}, "2pl");
  const auto refused = [&](const std::string& value, const std::string& words) {
    INFO(value);
    CHECK_THROWS_WITH(inference::user_priors({value}, two),
                      Catch::Contains(value) && Catch::Contains(words) && Catch::Contains("Fix:"));
    CHECK_THROWS_AS(inference::user_priors({value}, two), UserError);
  };
  refused("loga=normal(0,1)", "did you mean 'log_a'");
  refused("log_a=normal(0)", "NAME=normal(MEAN, SD)");
  refused("b=normal(0,-1)", "the sd must be positive");
  refused("b=normal(0,0)", "the sd must be positive");
  refused("c=beta(5,17)", "the 2pl model has no prior 'c'");
  refused("b=beta(1,2)", "'b' takes a normal prior");
  refused("log_a=normal(x,1)", "not numbers");
  refused("log_a=normal(1e999,1)", "not numbers");
}

TEST_CASE("user_priors: a JSON file of priors as a study's simulator.priors, unknown keys refused", "[user_prior]") {
  const auto two = test::simulator_at({5, 5, 100, 100}, "2pl");
  const std::string file = "user_prior_test_priors.json";
  std::ofstream(file) << R"({"b": {"mean": 0.5, "sd": 0.8}})";
  const auto priors = inference::user_priors({file, "log_a=normal(0.3, 0.2)"}, two);
  CHECK(priors.b.mean == 0.5);
  CHECK(priors.b.sd == 0.8);
  CHECK(priors.log_a.mean == 0.3);
  std::ofstream(file) << R"({"log_a": {"mean": 0, "sdd": 1}})";
  CHECK_THROWS_WITH(inference::user_priors({file}, two),
                    Catch::Contains("log_a.sdd") && Catch::Contains("did you mean 'log_a.sd'"));
  std::remove(file.c_str());
}
