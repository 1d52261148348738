#include "report/html_report.hpp"
#include "tests/report/recorded_trials.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <regex>

#include <unistd.h>

using namespace bfhpo;
using nlohmann::json;
using hpo::TrialState;

namespace {

size_t count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("the report draws one history point per COMPLETE trial, every memory fact, and the best trial's diagnostics") {
  const auto dir = std::filesystem::temp_directory_path() / ("bfhpo_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Per-item posterior summaries of a calibrated posterior: truth ~ N(mean, sd).
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  json items = {{"n_draws", 100}, {"parameters", json::array()}};
  for (const char* name : {"log_a", "b"}) {
    json p = {{"name", name}, {"prior_variance", 1.0}};
    for (int i = 0; i < 300; ++i) {
      const double mean = normal(rng), sd = 0.4;
      const double truth = mean + sd * normal(rng);
      p["mean"].push_back(mean);
      p["std"].push_back(sd);
      p["truth"].push_back(truth);
      p["rank"].push_back(static_cast<int>(std::lround(100 * 0.5 * std::erfc(-(truth - mean) / sd / std::sqrt(2.0)))));
    }
    items["parameters"].push_back(p);
  }
  std::ofstream(dir / "trial-1.posterior.json") << items.dump();

  std::vector<hpo::FrozenTrial> trials{
      test::launched_trial(0, TrialState::Complete, 1.5, "fits", std::nullopt, 16, 10.0, 9.5, 4.0),
      test::launched_trial(1, TrialState::Complete, 1.2, "rechunked", 8, 16, 20.0, 19.0, 5.0),
      test::memory_pruned_trial(2, 80.06),
      test::launched_trial(3, TrialState::Pruned, std::nullopt, "fits", std::nullopt, 16, 10.0, 9.0, 2.0),
      test::launched_trial(4, TrialState::Complete, 1.3, "fits", std::nullopt, 8, 16.0, 16.0, 6.0)};
  trials[1].system_attrs["bfhpo:posterior_items"] = (dir / "trial-1.posterior.json").string();
  trials[1].system_attrs["bfhpo:diagnostics"] = {
      {"parameters", json::array({{{"name", "log_a"}, {"calibration_error", 0.01}}, {{"name", "b"}}})}};
  trials[4].system_attrs["bfhpo:oom_history"] =
      json::array({{{"step", 3}, {"config", "batch 16, chunk none"}, {"error", "out of memory"}}});

  const std::string html = report::html_report(test::tiny_study_spec(dir), trials,
                                               {{"study:metric_names", json::array({"val_nll"})}});
  std::filesystem::remove_all(dir);
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(html, !Catch::Contains("<script"));
  // No address but the SVG namespace: nothing is fetched when the page is viewed.
  CHECK(count(html, "https?://") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(count(html, "<circle class=\"history-point\"") == 3);
  for (int n : {0, 1, 4}) CHECK(count(html, "class=\"history-point\"[^>]*data-trial=\"" + std::to_string(n) + "\"") == 1);
  CHECK(count(html, "<polyline class=\"curve ") == 4);  // every trial that reported
  CHECK(count(html, "<path class=\"pruned-end\"") == 1);
  CHECK(count(html, "<circle class=\"estimate\"") == 4);  // launched trials
  CHECK(count(html, "<circle class=\"measured\"") == 4);
  CHECK(count(html, "<path class=\"pruned-estimate\"") == 1);
  CHECK(count(html, "<line class=\"budget\"") == 1);
  CHECK(count(html, "<rect class=\"time-bar ") == 5);
  CHECK(count(html, "<tr class=\"gate-row\">") == 5);
  CHECK_THAT(html, Catch::Contains("batch 16, chunk none") && Catch::Contains("re-chunked to chunk 8, checkpointing"));
  CHECK_THAT(html, Catch::Contains("val_nll"));
  CHECK_THAT(html, Catch::Contains("Posterior diagnostics of the best trial (1)"));
  CHECK(count(html, "<polyline class=\"ecdf\"") == 2);
  CHECK(count(html, "<circle class=\"recovery\"") == 600);
  CHECK(count(html, "<circle class=\"zscore\"") == 600);
  CHECK_THAT(html, Catch::Contains("one-way ANOVA"));
}
