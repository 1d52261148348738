#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "inference/posterior_inference.hpp"
#include "inference/shipped_estimators.hpp"
#include "inference/spread_at_shape.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"
#include "tests/models/tiny_spec.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace bfhpo;

TEST_CASE("every shipped estimator loads and is calibrated on a small batch from its own prior",
          "[shipped_estimators]") {
  const auto estimators = inference::shipped_estimators();
  REQUIRE_FALSE(estimators.empty());
  for (const auto& estimator : estimators) {
    INFO(estimator.name);
    auto model = inference::load_trained_model(estimator.folder);
    CHECK(model.config.simulator.to_json() == estimator.simulator.to_json());
    // 16 data sets at the middle of its ranges; each true item parameter's rank among 200 draws.
    const auto& r = estimator.simulator.ranges;
    auto spec = estimator.simulator;  // at the middle of its missing rates too: one spread calibration for all 16
    spec.missing = {(spec.missing.low + spec.missing.high) / 2.0, (spec.missing.low + spec.missing.high) / 2.0};
    const models::Simulator simulator(spec, 7, torch::kCPU);
    inference::ShapeSpreads spreads;
    const auto batch = simulator.sample_shape(16, (r.min_items + r.max_items) / 2, (r.min_persons + r.max_persons) / 2, 0);
    int64_t inside[3] = {0, 0, 0}, intervals = 0;
    const double levels[3] = {0.5, 0.8, 0.95};
    std::vector<double> set_coverage[3];  // each data set's own, per level
    for (int64_t k = 0; k < 16; ++k) {
      inference::ResponseMatrix data = test::data_of({batch.responses.narrow(0, k, 1), batch.mask.narrow(0, k, 1),
                                                      batch.item_params.narrow(0, k, 1), batch.abilities.narrow(0, k, 1)});
      const auto draws =
          inference::infer_posterior(model, data, 200, 11 + static_cast<uint64_t>(k), std::nullopt, &spreads)
              .draws.to(torch::kFloat64);
      const auto truth = batch.item_params[k].to(torch::kFloat64).unsqueeze(1);  // [J, 1, D]
      const auto rank = draws.lt(truth).to(torch::kFloat64).mean(1);            // [J, D] in [0, 1]
      for (int l = 0; l < 3; ++l) {
        const auto in_set = (rank - 0.5).abs().le(levels[l] / 2).sum().item<int64_t>();
        inside[l] += in_set;
        set_coverage[l].push_back(static_cast<double>(in_set) / static_cast<double>(rank.numel()));
      }
      intervals += rank.numel();
    }
    // A calibrated estimator covers each level's share of the truths: within 4 standard errors (an estimator
    // whose weights or config were wrong misses by tens of points). The intervals of one data set are not
    // independent (its items share its persons, an item's parameters share its data), so the standard error
    // is the larger of the binomial one and the data sets' own: the sd of their 16 coverages over 4.
    for (int l = 0; l < 3; ++l) {
      const double coverage = static_cast<double>(inside[l]) / static_cast<double>(intervals);
      const double binomial = std::sqrt(levels[l] * (1.0 - levels[l]) / static_cast<double>(intervals));
      double squares = 0.0;
      for (double c : set_coverage[l]) squares += (c - coverage) * (c - coverage);
      const auto sets = static_cast<double>(set_coverage[l].size());
      const double between_sets = std::sqrt(squares / (sets - 1.0) / sets);
      INFO("level " << levels[l] << ": coverage " << coverage << " over " << intervals << " intervals; standard "
                    "errors: binomial " << binomial << ", between data sets " << between_sets);
      CHECK(std::abs(coverage - levels[l]) < 4.0 * std::max(binomial, between_sets));
    }
  }
}

TEST_CASE("choose_estimator: the one whose ranges hold the data; otherwise the ranges and `init`",
          "[shipped_estimators]") {
  const auto narrow = test::simulator_at({16, 24, 400, 600}, "2pl");
  auto wide = test::simulator_at({5, 40, 150, 3000}, "2pl");
  wide.missing = {0.0, 0.2};
  const auto graded = test::simulator_at({5, 40, 150, 3000}, "grm", 5);
  const std::vector<inference::ShippedEstimator> estimators{
      {"2pl-a", "a", narrow}, {"2pl-b", "b", wide}, {"grm-5", "g", graded}};
  CHECK(inference::choose_estimator(estimators, "2pl", {20, 500, 0.0, 2}).name == "2pl-a");
  CHECK(inference::choose_estimator(estimators, "2pl", {20, 500, 0.1, 2}).name == "2pl-b");  // missing cells
  CHECK(inference::choose_estimator(estimators, "2pl", {30, 200, 0.0, 2}).name == "2pl-b");
  CHECK(inference::choose_estimator(estimators, "grm", {10, 300, 0.0, 5}).name == "grm-5");
  CHECK_THROWS_WITH(inference::choose_estimator(estimators, "grm", {10, 300, 0.0, 4}),
                    Catch::Contains("outside every shipped estimator's ranges") && Catch::Contains("5 categories") &&
                        Catch::Contains("bfhpo init --data FILE --model grm"));
  CHECK_THROWS_WITH(inference::choose_estimator(estimators, "2pl", {50, 500, 0.0, 2}),
                    Catch::Contains("2pl-a: 16-24 items, 400-600 persons, no missing cells") &&
                        Catch::Contains("2pl-b: 5-40 items, 150-3000 persons, at most 20% missing cells"));
  CHECK_THROWS_WITH(inference::choose_estimator(estimators, "rasch", {10, 300, 0.0, 2}),
                    Catch::Contains("no estimator of that model ships") && Catch::Contains("2pl, grm"));
  CHECK_THROWS_AS(inference::choose_estimator(estimators, "3pl", {10, 300, 0.0, 2}), UserError);
}

TEST_CASE("DataShape::of: items, persons, the share of missing cells and the highest observed category + 1",
          "[shipped_estimators]") {
  inference::ResponseMatrix data;
  // 3 persons x 2 items; the missing cell's stored value is not a category seen.
  data.responses = torch::tensor({0.0F, 3.0F, 2.0F, 1.0F, 4.0F, 0.0F}).reshape({3, 2});
  data.mask = torch::tensor({1.0F, 1.0F, 1.0F, 1.0F, 0.0F, 1.0F}).reshape({3, 2});
  const auto shape = inference::DataShape::of(data);
  CHECK(shape.items == 2);
  CHECK(shape.persons == 3);
  CHECK(shape.missing_share == Approx(1.0 / 6.0).margin(1e-12));
  CHECK(shape.categories == 4);
  data.mask.fill_(1.0F);
  CHECK(inference::DataShape::of(data).categories == 5);
  CHECK(inference::DataShape::of(data).missing_share == 0.0);
}
