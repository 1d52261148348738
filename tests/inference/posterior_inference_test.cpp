#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "memory/meter.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace bfhpo;
using test::data_of;
using test::untrained_model;

namespace {

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
  model.spread = inference::PosteriorSpread{};  // the flow's own draws, unscaled
  const auto data = data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  const auto posterior = inference::infer_posterior(model, data, 200, 11);
  REQUIRE(posterior.draws.sizes() == std::vector<int64_t>{7, 200, 4});
  const auto thresholds = posterior.draws.narrow(-1, 1, 3);
  CHECK((thresholds.narrow(-1, 1, 2) > thresholds.narrow(-1, 0, 2)).all().item<bool>());
  CHECK(any_warning_with(posterior.warnings, "outside the prior's support"));
  // log q of the kept draws themselves.
  const auto expected = model.approximator->log_prob(posterior.draws.unsqueeze(0), data.responses.unsqueeze(0),
                                                     data.mask.unsqueeze(0))[0];
  CHECK(torch::allclose(posterior.log_prob, expected));
  // The same seed gives the same draws.
  CHECK(torch::equal(inference::infer_posterior(model, data, 200, 11).draws, posterior.draws));
}

TEST_CASE("infer_posterior: a missing cell's value is never read; binary draws are the flow's own",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({6, 6, 40, 40}, "2pl", 2, 0.3);
  auto model = untrained_model(simulator);
  model.spread = inference::PosteriorSpread{};  // the flow's own draws, unscaled
  auto data = data_of(models::Simulator(simulator, 4, torch::kCPU).sample(1, 0));
  REQUIRE(data.mask.min().item<float>() == 0.0f);
  const auto posterior = inference::infer_posterior(model, data, 50, 2);
  auto flipped = data;
  flipped.responses = torch::where(data.mask.to(torch::kBool), data.responses, torch::ones_like(data.responses));
  CHECK(torch::equal(inference::infer_posterior(model, flipped, 50, 2).draws, posterior.draws));
  // Masking an observed cell changes the posterior: the mask is read.
  auto fewer = data;
  fewer.mask = data.mask.clone();
  fewer.mask.index_put_({torch::indexing::Slice(), 0}, 0.0f);
  CHECK_FALSE(torch::equal(inference::infer_posterior(model, fewer, 50, 2).draws, posterior.draws));
  // Every 2PL draw is inside the prior's support: the draws are the flow's, as the TorchScript module gives them.
  torch::manual_seed(2);
  const auto flow = model.approximator->sample(50, data.responses.unsqueeze(0), data.mask.unsqueeze(0)).first[0];
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
  const auto posterior = inference::infer_posterior(model, data, 20, 1);
  CHECK(any_warning_with(posterior.warnings, "item 'item2' has no response"));
  CHECK(any_warning_with(posterior.warnings, "of the cells missing, outside the 10% to 10%"));
  CHECK(inference::response_format(model).n_categories == 3);
  CHECK(inference::response_format(model).missing_allowed);
  CHECK_FALSE(inference::response_format(untrained_model(test::simulator_at({6, 6, 40, 40}))).missing_allowed);
}

TEST_CASE("inference_memory_mb: an upper bound of the tensor bytes infer_posterior holds at once",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({7, 7, 30, 30}, "grm", 4, 0.2);
  auto model = untrained_model(simulator);
  const auto data = data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  memory::MemoryMeter meter(torch::kCPU);
  // Where the draws dominate (7 items x 20000 or 40000 draws). At 200 draws the meter shows about 14 MB
  // that do not grow with the draws and that the estimate does not count.
  for (const int64_t draws : {20000, 40000}) {
    meter.reset_peak();
    const auto before = meter.snapshot().current_bytes;
    const auto posterior = inference::infer_posterior(model, data, draws, 1);
    const double tensors_mb = static_cast<double>(meter.snapshot().peak_bytes - before) / (1024.0 * 1024.0);
    const double csv_mb = static_cast<double>(posterior.draws_csv().size()) / (1024.0 * 1024.0);
    const double estimate_mb = inference::inference_memory_mb(model, 30, 7, draws, 5);
    INFO("draws " << draws << ": tensors " << tensors_mb << " MB, CSV " << csv_mb << " MB, estimate " << estimate_mb);
    CHECK(tensors_mb + csv_mb <= estimate_mb);
    // Not so loose that it refuses what fits: within 4x of what is measured.
    CHECK(estimate_mb <= 4 * (tensors_mb + csv_mb));
  }
}

TEST_CASE("check_inference_memory: over the budget, the largest --draws or number of items that fits",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({7, 7, 30, 30});
  auto model = untrained_model(simulator);
  const auto data = data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  const double budget_mb = inference::inference_memory_mb(model, 30, 7, 5000, 5);
  CHECK_NOTHROW(inference::check_inference_memory(model, data, 5000, budget_mb));
  try {
    inference::infer_posterior(model, data, 5001, 1, budget_mb);
    FAIL("5001 draws fit in the budget of 5000");
  } catch (const UserError& error) {
    CHECK_THAT(error.what(), Catch::Contains("--draws 5001: 7 items x 5001 draws need about") &&
                                 Catch::Contains("Fix: --draws 5000 or fewer"));
  }
  // Items squared: 1000 items do not fit in the budget of 2 draws of 400 items, at any number of draws.
  auto wide = data;
  wide.source = "wide.csv";
  wide.item_names.resize(1000, "item");
  wide.responses = torch::zeros({30, 1000});
  wide.mask = torch::ones({30, 1000});
  const double items_budget_mb = inference::inference_memory_mb(model, 30, 400, 2, 5);
  try {
    inference::check_inference_memory(model, wide, 2, items_budget_mb);
    FAIL("1000 items fit in the budget of 400");
  } catch (const UserError& error) {
    CHECK_THAT(error.what(), Catch::Contains("wide.csv: 30 persons x 1000 items need about") &&
                                 Catch::Contains("Fix: infer on at most 400 items at a time"));
  }
}

TEST_CASE("summary_csv and draws_csv: an item name with a comma, a quote or a line break is one quoted field",
          "[posterior_inference]") {
  const auto simulator = test::simulator_at({3, 3, 30, 30});
  auto model = untrained_model(simulator);
  auto data = data_of(models::Simulator(simulator, 9, torch::kCPU).sample(1, 0));
  data.item_names = {"Q1, reading", "say \"hi\"", "two\r\nlines"};
  const auto posterior = inference::infer_posterior(model, data, 5, 1);
  const std::string summary = posterior.summary_csv(), draws = posterior.draws_csv();
  for (const std::string field : {"\"Q1, reading\",", "\"say \"\"hi\"\"\",", "\"two\r\nlines\","}) {
    CHECK(summary.find("\n" + field + "a,") != std::string::npos);
    CHECK(draws.find("\n" + field + "0,") != std::string::npos);
  }
}
