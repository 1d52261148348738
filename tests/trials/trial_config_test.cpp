#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "hpo/study_spec.hpp"
#include "trials/trial_config.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using bfhpo::UserError;
using namespace bfhpo::trials;
using nlohmann::json;

namespace {

bfhpo::hpo::StudySpec training_study(const json& search_space) {
  json document = {{"name", "t"},
                   {"seed", 3},
                   {"simulator", {{"model", "2pl"}, {"n_items", {10, 20}}, {"n_persons", 100}}},
                   {"training", {{"epochs", 2}, {"batch_size", 8}, {"device", "cpu"}}},
                   {"approximator", {{"calibrated", true}, {"flow", {{"depth", 3}}}}},
                   {"search_space", search_space}};
  return bfhpo::hpo::parse_study_spec(document, "study.json");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a training study's sections and params make one TrialConfig", "[trial_config]") {
  const auto study = training_study({{"flow.depth", {{"type", "int"}, {"low", 2}, {"high", 8}}},
                                     {"training.batch_size", {{"type", "int"}, {"low", 4}, {"high", 64}}}});
  const TrialConfig fixed = study_trial_config(study);
  REQUIRE(fixed.simulator.ranges.min_items == 10);
  REQUIRE(fixed.simulator.ranges.max_items == 20);
  REQUIRE(fixed.simulator.ranges.min_persons == 100);
  REQUIRE(fixed.simulator.ranges.max_persons == 100);
  REQUIRE(fixed.training.epochs == 2);
  REQUIRE(fixed.training.seed == 3);
  REQUIRE(fixed.approximator.calibration.enabled);
  REQUIRE(fixed.approximator.flow.depth == 3);

  const TrialConfig trial = make_trial_config(study, {{"flow.depth", 6}, {"training.batch_size", 16}}, "params.json");
  REQUIRE(trial.approximator.flow.depth == 6);
  REQUIRE(trial.training.batch_size == 16);
  REQUIRE(trial.training.epochs == 2);

  // The complete configuration reads back to the same configuration.
  const TrialConfig back = parse_trial_config(trial.to_json(), "export.json");
  REQUIRE(back.to_json() == trial.to_json());
}

TEST_CASE("search-space names must map to a field, errors suggest the closest", "[trial_config]") {
  const auto bad = training_study({{"flow.dept", {{"type", "int"}, {"low", 2}, {"high", 8}}}});
  REQUIRE_THAT(error_of([&] { study_trial_config(bad); }),
               Catch::Contains("study.json") && Catch::Contains("search_space.flow.dept") &&
                   Catch::Contains("flow.depth"));
  const auto bad_training = training_study({{"training.batchsize", {{"type", "int"}, {"low", 2}, {"high", 8}}}});
  REQUIRE_THAT(error_of([&] { study_trial_config(bad_training); }), Catch::Contains("training.batch_size"));
  const auto ok = training_study({{"flow.depth", {{"type", "int"}, {"low", 2}, {"high", 8}}}});
  REQUIRE_THAT(error_of([&] { make_trial_config(ok, {{"training.epochs", 0}}, "p.json"); }),
               Catch::Contains("p.json") && Catch::Contains("training.epochs"));
  REQUIRE_THAT(error_of([&] { make_trial_config(ok, {{"summary.attention_heads", 5}}, "p.json"); }),
               Catch::Contains("summary.attention_heads"));
}

TEST_CASE("the simulator's model decides the approximator's target dimension and categories", "[trial_config]") {
  const auto parse = [](const json& simulator, const json& approximator = json::object()) {
    return parse_trial_config({{"simulator", simulator}, {"approximator", approximator}}, "study.json");
  };
  CHECK(parse({{"model", "rasch"}}).approximator.param_dim == 1);
  CHECK(parse({{"model", "2pl"}}).approximator.param_dim == 2);
  CHECK(parse({{"model", "3pl"}}).approximator.param_dim == 3);
  const TrialConfig grm = parse({{"model", "grm"}, {"n_categories", 5}, {"missing", 0.2}});
  CHECK(grm.approximator.param_dim == 5);
  CHECK(grm.approximator.n_categories == 5);
  CHECK(grm.simulator.missing.high == 0.2);
  // The complete configuration reads back unchanged.
  CHECK(parse_trial_config(grm.to_json(), "export.json").to_json() == grm.to_json());
  // A study file that sets them otherwise is refused.
  CHECK_THAT(error_of([&] { parse({{"model", "3pl"}}, {{"param_dim", 2}}); }),
             Catch::Contains("approximator.param_dim") && Catch::Contains("\"3pl\" has 3") &&
                 Catch::Contains("Fix: remove it"));
  CHECK_THAT(error_of([&] { parse({{"model", "2pl"}}, {{"n_categories", 4}}); }),
             Catch::Contains("approximator.n_categories"));
  // They are not hyperparameters.
  const auto searched = training_study({{"param_dim", {{"type", "int"}, {"low", 2}, {"high", 3}}}});
  CHECK_THAT(error_of([&] { study_trial_config(searched); }), Catch::Contains("search_space.param_dim"));
}

TEST_CASE("the steps limit is checked on epochs x num_batches as given, in 64-bit", "[trial_config]") {
  // 50000000 x 2 = 1e8 steps: valid, whatever order the fields are read in (num_batches' default is 50).
  const json valid = {{"training", {{"epochs", 50000000}, {"num_batches", 2}}}};
  CHECK(parse_trial_config(valid, "study.json").training.total_steps() == 100000000);
  // 1073741824 x 50 overflows an int (to 0 steps); in 64-bit it is over the limit.
  const std::string error =
      error_of([] { parse_trial_config({{"training", {{"epochs", 1073741824}}}}, "study.json"); });
  CHECK_THAT(error, Catch::Contains("field 'training.epochs'") && Catch::Contains("53687091200 steps") &&
                        Catch::Contains("Fix:"));
  // A params file that sets both fields: checked together, too.
  const auto study = training_study(json::object());
  CHECK(with_params(study_trial_config(study), {{"training.epochs", 50000000}, {"training.num_batches", 2}}, "p.json")
            .training.total_steps() == 100000000);
}

TEST_CASE("training.initial_weights: relative to the study file, kept absolute, never searched", "[trial_config]") {
  const auto folder = std::filesystem::temp_directory_path() / ("bfhpo_initial_weights_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder / "estimator");
  { std::ofstream(folder / "estimator" / "weights.pt") << "weights"; }
  const auto study_at = [&](const json& weights, const json& search_space) {
    json document = {{"name", "t"},
                     {"simulator", {{"model", "2pl"}, {"n_items", 10}, {"n_persons", 100}}},
                     {"training", {{"epochs", 2}, {"initial_weights", weights}}},
                     {"search_space", search_space}};
    return bfhpo::hpo::parse_study_spec(document, (folder / "study.json").string());
  };
  const json learning_rate = {{"training.learning_rate", {{"type", "float"}, {"low", 1e-4}, {"high", 1e-3}}}};
  const TrialConfig config = study_trial_config(study_at("estimator/weights.pt", learning_rate));
  CHECK(config.training.initial_weights == (folder / "estimator" / "weights.pt").string());
  // The written configuration reads back to the same file wherever it is read.
  CHECK(parse_trial_config(config.to_json(), "/elsewhere/config.json").training.initial_weights ==
        config.training.initial_weights);
  CHECK(parse_trial_config(json{{"training", {{"epochs", 1}}}}, "c.json").training.initial_weights.empty());

  CHECK_THAT(error_of([&] { study_trial_config(study_at("estimator/missing.pt", learning_rate)); }),
             Catch::Contains("training.initial_weights") && Catch::Contains("missing.pt: no such file"));
  CHECK_THAT(error_of([&] { study_trial_config(study_at("", learning_rate)); }),
             Catch::Contains("training.initial_weights") && Catch::Contains("the path of a weights.pt"));
  CHECK_THAT(error_of([&] {
               study_trial_config(study_at("estimator/weights.pt", {{"flow.depth", {{"type", "int"}, {"low", 2}, {"high", 8}}}}));
             }),
             Catch::Contains("search_space.flow.depth") && Catch::Contains("training.initial_weights fixes"));
  CHECK_THAT(error_of([&] {
               study_trial_config(study_at("estimator/weights.pt",
                                           {{"training.initial_weights", {{"type", "categorical"}, {"choices", {"a"}}}}}));
             }),
             Catch::Contains("search_space.training.initial_weights") && Catch::Contains("does not name"));
  std::filesystem::remove_all(folder);
}
