#include <catch2/catch.hpp>

#include "models/simulators/simulator.hpp"
#include "tests/models/tiny_spec.hpp"
#include "trials/posterior_inference.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

// An untrained estimator of `simulator`'s model, every weight perturbed at
// random: the flow's zero-initialised output layers would otherwise make
// its draws ignore the responses.
trials::TrainedModel untrained_model(const models::SimulatorSpec& simulator) {
  trials::TrainedModel model;
  model.config.simulator = simulator;
  model.config.approximator = test::tiny_spec_for(simulator);
  torch::manual_seed(3);
  model.approximator = models::make_approximator(model.config.approximator, 3);
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.approximator->parameters()) parameter.add_(0.1 * torch::randn_like(parameter));
  model.approximator->eval();
  return model;
}

trials::ResponseMatrix data_of(const models::SimulatedBatch& batch) {
  trials::ResponseMatrix data;
  for (int64_t j = 0; j < batch.responses.size(2); ++j) data.item_names.push_back("item" + std::to_string(j));
  data.responses = batch.responses[0];
  data.mask = batch.mask[0];
  return data;
}

bool any_warning_with(const std::vector<std::string>& warnings, const std::string& needle) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

}  // namespace

TEST_CASE("infer_posterior: graded thresholds come out in order, as the prior allows", "[posterior_inference]") {
  // An untrained flow puts most of its mass on unordered thresholds (about 5 in
  // 6 of its draws for 3 thresholds): every kept draw must be ordered anyway.
  const auto simulator = test::simulator_at({7, 7, 30, 30}, "grm", 4, 0.2);
  auto model = untrained_model(simulator);
  const auto data = data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  const auto posterior = trials::infer_posterior(model, data, 200, 11);
  REQUIRE(posterior.draws.sizes() == std::vector<int64_t>{7, 200, 4});
  const auto thresholds = posterior.draws.narrow(-1, 1, 3);
  CHECK((thresholds.narrow(-1, 1, 2) > thresholds.narrow(-1, 0, 2)).all().item<bool>());
  CHECK(any_warning_with(posterior.warnings, "outside the prior's support"));
  // log q of the kept draws themselves.
  const auto expected = model.approximator->log_prob(posterior.draws.unsqueeze(0), data.responses.unsqueeze(0),
                                                     data.mask.unsqueeze(0))[0];
  CHECK(torch::allclose(posterior.log_prob, expected));
  // The same seed gives the same draws.
  CHECK(torch::equal(trials::infer_posterior(model, data, 200, 11).draws, posterior.draws));
}

TEST_CASE("infer_posterior: a missing cell's value is never read; binary draws are the flow's own",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.3);
  auto model = untrained_model(simulator);
  auto data = data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  REQUIRE(data.mask.min().item<float>() == 0.0f);
  const auto posterior = trials::infer_posterior(model, data, 50, 2);
  auto flipped = data;
  flipped.responses = torch::where(data.mask.to(torch::kBool), data.responses, torch::ones_like(data.responses));
  CHECK(torch::equal(trials::infer_posterior(model, flipped, 50, 2).draws, posterior.draws));
  // Masking an observed cell changes the posterior: the mask is read.
  auto fewer = data;
  fewer.mask = data.mask.clone();
  fewer.mask.index_put_({torch::indexing::Slice(), 0}, 0.0f);
  CHECK_FALSE(torch::equal(trials::infer_posterior(model, fewer, 50, 2).draws, posterior.draws));
  // Every 2PL draw is inside the prior's support: the draws are the flow's, as the TorchScript module gives them.
  torch::manual_seed(2);
  const auto flow = model.approximator->sample(50, data.responses.unsqueeze(0), data.mask.unsqueeze(0))[0];
  CHECK(torch::equal(flow, posterior.draws));
  CHECK_FALSE(any_warning_with(posterior.warnings, "support"));
}

TEST_CASE("infer_posterior: warnings for a missing share outside the trained range and an item nobody answered",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "grm", 3, 0.1);
  auto model = untrained_model(simulator);
  auto data = data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  data.mask.index_put_({torch::indexing::Slice(), 2}, 0.0f);
  data.mask.index_put_({torch::indexing::Slice(0, 20), 3}, 0.0f);
  const auto posterior = trials::infer_posterior(model, data, 20, 1);
  CHECK(any_warning_with(posterior.warnings, "item 'item2' has no response"));
  CHECK(any_warning_with(posterior.warnings, "of the cells missing, outside the 10% to 10%"));
  CHECK(trials::response_format(model).n_categories == 3);
  CHECK(trials::response_format(model).missing_allowed);
  CHECK_FALSE(trials::response_format(untrained_model(test::simulator_at({6, 6, 40, 40}))).missing_allowed);
}
