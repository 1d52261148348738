#include <catch2/catch.hpp>

#include "inference/many_data_sets.hpp"
#include "tests/inference/untrained_model.hpp"

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

// A folder of response files: simulated data sets of `simulator` (seeds 1..sets), and one file whose category
// the model does not know in third place.
std::filesystem::path write_data_sets(const models::SimulatorSpec& simulator, int sets) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("bfhpo_many_data_sets_" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  for (int set = 1; set <= sets; ++set) {
    const auto batch = models::Simulator(simulator, static_cast<uint64_t>(set), torch::kCPU).sample(1, 0);
    const auto responses = batch.responses[0].to(torch::kLong), mask = batch.mask[0];
    std::ofstream out(folder / ("set" + std::to_string(set) + ".csv"));
    for (int64_t j = 0; j < responses.size(1); ++j) out << (j ? "," : "") << "item" << j;
    out << "\n";
    for (int64_t p = 0; p < responses.size(0); ++p) {
      for (int64_t j = 0; j < responses.size(1); ++j) {
        out << (j ? "," : "");
        if (mask[p][j].item<float>() > 0.0f) out << (set == 3 && p == 0 && j == 0 ? 7 : responses[p][j].item<int64_t>());
      }
      out << "\n";
    }
  }
  return folder;
}

struct Outcomes {
  std::vector<size_t> order;
  std::vector<inference::DataSetOutcome> outcomes;
};

Outcomes run(inference::TrainedModel& model, const std::filesystem::path& folder,
             const inference::InferenceOptions& options, int64_t at_once) {
  inference::DataSetSources sources({folder.string()}, "", "", inference::response_format(model));
  Outcomes out;
  inference::infer_many(model, sources, options, [&](size_t index, const inference::DataSetOutcome& outcome) {
    out.order.push_back(index);
    out.outcomes.push_back(outcome);
  }, at_once);
  return out;
}

}  // namespace

TEST_CASE("infer_many side by side gives what one data set at a time gives, handed over in order",
          "[many_data_sets]") {
  const auto simulator = test::simulator_at({5, 5, 40, 60}, "2pl", 2, 0.1);
  auto model = test::untrained_model(simulator);
  const auto folder = write_data_sets(simulator, 5);
  inference::InferenceOptions options;
  options.draws = 40;
  options.seed = 8;
  options.refinement = inference::RefinementOptions{"importance"};
  options.check = inference::PredictiveCheckOptions{100, 0.5, 3};
  options.persons = inference::PersonScoreOptions{40, 3, 5};
  const auto alone = run(model, folder, options, 1);
  const auto together = run(model, folder, options, 3);
  const std::vector<size_t> in_order{0, 1, 2, 3, 4};
  CHECK(alone.order == in_order);
  CHECK(together.order == in_order);
  REQUIRE(together.outcomes.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    const auto& a = alone.outcomes[i];
    const auto& b = together.outcomes[i];
    CHECK(a.row.dataset == b.row.dataset);
    CHECK(a.row.error == b.row.error);
    REQUIRE(a.result.has_value() == b.result.has_value());
    if (!a.result) continue;
    CHECK(torch::equal(a.result->posterior.draws, b.result->posterior.draws));
    CHECK(torch::equal(a.result->posterior.log_prob, b.result->posterior.log_prob));
    CHECK(a.result->path() == b.result->path());
    CHECK(a.result->predictive->to_csv() == b.result->predictive->to_csv());
    CHECK(a.result->summary_space->to_json() == b.result->summary_space->to_json());
    CHECK(torch::equal(a.result->persons->summary, b.result->persons->summary));
    CHECK(torch::equal(a.result->persons->plausible_values, b.result->persons->plausible_values));
  }
  // The file with an unknown category fails on its own row; the others are inferred.
  CHECK(together.outcomes[2].row.error.find("set3") != std::string::npos);
  CHECK_FALSE(together.outcomes[2].result.has_value());
  CHECK(together.outcomes[3].result.has_value());
  std::filesystem::remove_all(folder);
}

TEST_CASE("infer_many: data set k draws with seed + k, as alone with that seed; the same data twice get "
          "independent draws", "[many_data_sets]") {
  const auto simulator = test::simulator_at({5, 5, 40, 40}, "grm", 4, 0.0);
  auto model = test::untrained_model(simulator);
  const auto folder = write_data_sets(simulator, 2);
  std::filesystem::copy_file(folder / "set1.csv", folder / "set2.csv", std::filesystem::copy_options::overwrite_existing);
  inference::InferenceOptions options;
  options.draws = 40;
  options.seed = 8;
  options.check = inference::PredictiveCheckOptions{100, 0.5, 3};
  options.persons = inference::PersonScoreOptions{40, 3, 5};
  const auto run_of_two = run(model, folder, options, 1);
  REQUIRE(run_of_two.outcomes.size() == 2);
  const auto& first = *run_of_two.outcomes[0].result;
  const auto& second = *run_of_two.outcomes[1].result;
  CHECK(run_of_two.outcomes[0].row.seed == std::optional<uint64_t>(8));
  CHECK(run_of_two.outcomes[1].row.seed == std::optional<uint64_t>(9));
  // The same responses: under one seed their draws, replications and plausible values would be equal.
  CHECK_FALSE(torch::equal(first.posterior.draws, second.posterior.draws));
  CHECK(first.predictive->to_csv() != second.predictive->to_csv());
  CHECK_FALSE(torch::equal(first.persons->plausible_values, second.persons->plausible_values));
  // The summary-space check's reference is the run's: the same data give the same p.
  CHECK(first.summary_space->to_json() == second.summary_space->to_json());
  // The second alone, with seed 9, is what the run gave it.
  const auto data = inference::read_response_matrix(folder / "set2.csv", "", inference::response_format(model));
  auto alone_options = options;
  alone_options.seed = 9;
  alone_options.check->seed = 4;
  alone_options.persons->seed = 6;
  const auto alone = inference::infer_data_set(model, data, alone_options, [](const std::string&) {});
  CHECK(torch::equal(alone.posterior.draws, second.posterior.draws));
  CHECK(alone.predictive->to_csv() == second.predictive->to_csv());
  CHECK(torch::equal(alone.persons->plausible_values, second.persons->plausible_values));
  std::filesystem::remove_all(folder);
}
