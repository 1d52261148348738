#include <catch2/catch.hpp>

#include "inference/data_set_inference.hpp"
#include "inference/marginal_likelihood.hpp"
#include "tests/inference/untrained_model.hpp"

#include <string>
#include <vector>

using namespace bfhpo;

namespace {

size_t index_of_line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i;
  return lines.size();
}

// An untrained estimator of `simulator` and one of its simulated data sets.
struct Setup {
  inference::TrainedModel model;
  inference::ResponseMatrix data;
  Setup(const models::SimulatorSpec& simulator, uint64_t seed)
      : model(test::untrained_model(simulator)),
        data(test::data_of(models::Simulator(simulator, seed, torch::kCPU).sample(1, 0))) {}
};

}  // namespace

TEST_CASE("infer_data_set with nothing asked is infer_posterior's draws and says its warnings",
          "[data_set_inference]") {
  Setup setup(test::simulator_at({5, 5, 40, 40}, "grm", 4, 0.1), 5);
  auto& [model, data] = setup;
  std::vector<std::string> lines;
  inference::InferenceOptions options{60, 8, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  const auto result = inference::infer_data_set(model, data, options, [&](const std::string& l) { lines.push_back(l); });
  const auto direct = inference::infer_posterior(model, data, 60, 8);
  CHECK(torch::equal(result.posterior.draws, direct.draws));
  CHECK(torch::equal(result.posterior.log_prob, direct.log_prob));
  REQUIRE(lines.size() == direct.warnings.size());
  for (size_t i = 0; i < lines.size(); ++i) CHECK(lines[i] == "warning: " + direct.warnings[i]);
  const auto json = result.summary_json();
  CHECK_FALSE(json.contains("refinement"));
  CHECK_FALSE(json.contains("model_check"));
  CHECK_FALSE(result.predictive);
}

TEST_CASE("infer_data_set: chains' draws get the amortized log q, the check runs on the draws that stand",
          "[data_set_inference]") {
  Setup setup(test::simulator_at({4, 4, 50, 50}, "2pl", 2, 0.0), 6);
  auto& [model, data] = setup;
  std::vector<std::string> lines;
  inference::InferenceOptions options{40, 2, inference::RefinementOptions{"mcmc", 2, 20, 20, 4},
                                      inference::PredictiveCheckOptions{240, 0.05, 9}, std::nullopt, std::nullopt};
  const auto result = inference::infer_data_set(model, data, options, [&](const std::string& l) { lines.push_back(l); });

  REQUIRE(result.posterior.draws.size(1) == 40);
  const auto expected = inference::amortized_log_prob(model, data, result.posterior.draws, result.posterior);
  CHECK(torch::allclose(result.posterior.log_prob, expected));
  REQUIRE(result.predictive);
  const auto items = result.predictive->to_json()["items"];
  CHECK(items.size() == 4);
  const auto json = result.summary_json();
  CHECK(json["refinement"]["method"] == "mcmc");
  CHECK(json.contains("model_check"));
  // The refinement's line comes before the model check's, as they run.
  const auto check_line = index_of_line_starting(lines, "model check: ");
  REQUIRE(check_line < lines.size());
  CHECK(lines[check_line] == inference::model_check_line(*result.predictive, *result.summary_space));
  CHECK(index_of_line_starting(lines, "refinement: ") < check_line);
}

TEST_CASE("infer_data_set: data with every cell missing skip the summary-space check, saying why",
          "[data_set_inference]") {
  Setup setup(test::simulator_at({4, 4, 30, 30}, "2pl", 2, 0.3), 7);
  auto& [model, data] = setup;
  data.responses.zero_();
  data.mask.zero_();
  std::vector<std::string> lines;
  inference::InferenceOptions options{40, 2, std::nullopt, inference::PredictiveCheckOptions{500, 0.05, 9},
                                      std::nullopt, std::nullopt};
  const auto result = inference::infer_data_set(model, data, options, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE(result.summary_space);
  CHECK_FALSE(result.summary_space->skipped.empty());
  CHECK_FALSE(result.summary_space->outside());
  REQUIRE(result.predictive);
  const auto json = result.summary_json();
  CHECK(json["model_check"]["summary_space"]["p_value"].is_null());
  CHECK(json["model_check"]["summary_space"]["skipped"] == result.summary_space->skipped);
  bool warned = false;
  for (const auto& line : lines)
    warned |= line == "warning: model check: the summary-space check is left out: " + result.summary_space->skipped;
  CHECK(warned);
  const auto check_line = index_of_line_starting(lines, "model check: ");
  REQUIRE(check_line < lines.size());
  CHECK_THAT(lines[check_line], Catch::Contains("summary-space check left out") && !Catch::Contains("nan"));
}

TEST_CASE("infer_data_set under --prior: the chains' posterior is the exact one under the user's prior, and says so",
          "[data_set_inference]") {
  // Two Rasch items, 60 persons; the user's prior b ~ N(1.5, 0.3) is as strong as the data, so the exact
  // posterior under it lies far from the one under the training prior N(0, 1).
  const auto simulator = test::simulator_at({2, 2, 60, 60}, "rasch");
  Setup setup(simulator, 21);
  auto& [model, data] = setup;
  models::ItemPriors user = simulator.priors;
  user.b = {1.5, 0.3};
  auto user_spec = simulator;
  user_spec.priors = user;
  const auto user_model = models::make_item_response_model(user_spec);
  // The exact posterior means and sds under the user's prior on an 81 x 81 grid over [-4, 4]^2 (posterior
  // sds near 0.2 are 2 steps: the moments' quadrature error is far below the chains' Monte Carlo error).
  const inference::MarginalLikelihood likelihood(*user_model, data);
  const auto axis = torch::linspace(-4.0, 4.0, 81, torch::kFloat64);
  const auto grid = torch::stack(torch::meshgrid({axis, axis}, "ij"), -1).reshape({-1, 2, 1});
  const auto weight = torch::softmax(user_model->log_prior(grid).sum(1) + likelihood.log_likelihood(grid), 0).unsqueeze(1);
  const auto exact_mean = (weight * grid.squeeze(-1)).sum(0);
  const auto exact_sd = (weight * (grid.squeeze(-1) - exact_mean).pow(2)).sum(0).sqrt();

  std::vector<std::string> lines;
  inference::InferenceOptions options{400, 3, inference::RefinementOptions{"mcmc", 4, 300, 700, 5}, std::nullopt,
                                      std::nullopt, user};
  const auto result = inference::infer_data_set(model, data, options, [&](const std::string& l) { lines.push_back(l); });
  const auto mean = result.posterior.draws.to(torch::kFloat64).mean(1).squeeze(-1);
  // 400 kept draws of ESS >= ~300: the mean's error is below 0.06 sd; 0.25 sd is 4 of it.
  CHECK(((mean - exact_mean) / exact_sd).abs().max().item<double>() < 0.25);
  options.prior = std::nullopt;
  const auto trained = inference::infer_data_set(model, data, options, [](const std::string&) {});
  const auto trained_mean = trained.posterior.draws.to(torch::kFloat64).mean(1).squeeze(-1);
  CHECK(((trained_mean - exact_mean) / exact_sd).abs().max().item<double>() > 1.0);

  const auto json = result.summary_json();
  CHECK(json["prior"]["amortized"] == simulator.priors_json());
  CHECK(json["prior"]["posterior"] == user_spec.priors_json());
  CHECK(trained.summary_json()["prior"]["posterior"] == simulator.priors_json());
  CHECK(index_of_line_starting(lines, "prior: the amortized draws come from the training prior (b ~ N(0, 1)); "
                                      "the exact-posterior step targets b ~ N(1.5, 0.3)") < lines.size());
}

TEST_CASE("infer_data_set under --prior: draws left amortized keep the training prior and a warning says so",
          "[data_set_inference]") {
  Setup setup(test::simulator_at({5, 5, 40, 40}, "2pl", 2, 0.0), 7);
  auto& [model, data] = setup;
  models::ItemPriors user = model.config.simulator.priors;
  user.log_a = {1.0, 0.1};  // far from the untrained network's draws: importance cannot correct them
  std::vector<std::string> lines;
  inference::InferenceOptions options{100, 2, inference::RefinementOptions{"importance", 4, 500, 1500, 3},
                                      std::nullopt, std::nullopt, user};
  const auto result = inference::infer_data_set(model, data, options, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE(result.path() == "amortized");
  CHECK(result.summary_json()["prior"]["posterior"] == model.config.simulator.priors_json());
  CHECK(index_of_line_starting(lines, "warning: the draws left amortized keep the training prior") < lines.size());
}

TEST_CASE("infer_data_set: its importance step, model check and person scores read one table of the draws' "
          "ability posteriors and give what each gives alone",
          "[data_set_inference]") {
  for (const auto& simulator : {test::simulator_at({5, 5, 60, 60}, "2pl", 2, 0.1), test::simulator_at({4, 4, 60, 60}, "grm", 4, 0.1)}) {
    INFO(simulator.model);
    Setup setup(simulator, 12);
    auto& [model, data] = setup;
    const inference::RefinementOptions refinement{"importance", 4, 500, 1500, 3};
    const inference::PredictiveCheckOptions check{320, 0.05, 9};
    inference::PersonScoreOptions persons;
    persons.item_draws = 30;
    persons.plausible_values = 5;
    const inference::InferenceOptions options{80, 4, refinement, check, persons, std::nullopt};
    const auto together = inference::infer_data_set(model, data, options, [](const std::string&) {});
    REQUIRE(inference::DrawAbilityTable::fits(80, 60));

    const auto item_model = models::make_item_response_model(simulator);
    const auto amortized = inference::infer_posterior(model, data, 80, 4);
    const auto alone = inference::refine_posterior(*item_model, data, amortized, refinement);
    auto alone_json = alone.to_json(), together_json = *together.refinement;
    alone_json.erase("seconds");
    together_json.erase("seconds");
    CHECK(alone_json == together_json);
    CHECK(torch::equal(alone.posterior.draws, together.posterior.draws));
    CHECK(inference::posterior_predictive_check(*item_model, data, alone.posterior, check).to_csv() ==
          together.predictive->to_csv());
    const auto scores = inference::score_persons(*item_model, data, alone.posterior, persons);
    CHECK(torch::equal(scores.summary, together.persons->summary));
    CHECK(torch::equal(scores.plausible_values, together.persons->plausible_values));
  }
}
