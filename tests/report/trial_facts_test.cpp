#include "report/trial_facts.hpp"
#include "tests/report/recorded_trials.hpp"

#include <catch2/catch.hpp>

using namespace bfhpo;
using nlohmann::json;

TEST_CASE("trial facts read what the runner records; dashboard attributes state them readably") {
  hpo::FrozenTrial t = test::launched_trial(3, hpo::TrialState::Complete, 1.25, "rechunked", 8, 16, 16.61234,
                                            16.4987, 12.345);
  t.system_attrs["bfhpo:oom_history"] = json::array({{{"step", 7}, {"config", "batch 32, chunk 8, checkpointing"},
                                                      {"error", "out of memory"}}});
  t.system_attrs["bfhpo:diagnostics"] = {
      {"n_datasets", 64},
      {"parameters", json::array({{{"name", "log_a"}, {"calibration_error", 0.0123456}, {"correlation", 0.9}},
                                  {{"name", "b"}, {"calibration_error", nullptr}, {"correlation", 0.987654}}})}};
  const report::TrialFacts facts = report::trial_facts(t);
  CHECK(facts.gate == "rechunked");
  CHECK(facts.gate_memory == "chunk 8, checkpointing");
  CHECK(facts.trained_config() == "batch 16, chunk 8, checkpointing");
  REQUIRE(facts.oom_history.size() == 1);
  CHECK(facts.oom_history[0].step == 7);
  CHECK(facts.launched());

  const json attrs = report::dashboard_user_attrs(facts);
  CHECK(attrs["memory_gate"] == "re-chunked to chunk 8, checkpointing");
  CHECK(attrs["trained_batch_size"] == 16);
  CHECK(attrs["trained_item_chunk_size"] == 8);
  CHECK(attrs["gradient_checkpointing"] == true);
  CHECK(attrs["oom_retries"] == 1);
  // Two decimals for MB, one for seconds: what a reader compares, not float noise.
  CHECK(attrs["estimated_peak_mb"].get<double>() == 16.61);
  CHECK(attrs["measured_peak_mb"].get<double>() == 16.5);
  CHECK(attrs["duration_s"].get<double>() == 12.3);
  // Each diagnostic its own key, 4 significant digits; a missing metric stays null.
  CHECK(attrs["log_a.calibration_error"].get<double>() == 0.01235);
  CHECK(attrs["b.correlation"].get<double>() == 0.9877);
  CHECK(attrs["b.calibration_error"].is_null());
  CHECK_FALSE(attrs.contains("reason"));
  CHECK_FALSE(attrs.contains("diagnostics"));
}

TEST_CASE("a memory-pruned trial shows its reason and estimate and no trained configuration") {
  const report::TrialFacts facts = report::trial_facts(test::memory_pruned_trial(5, 80.06));
  CHECK_FALSE(facts.launched());
  const json attrs = report::dashboard_user_attrs(facts);
  CHECK(attrs["reason"].get<std::string>().rfind("memory:", 0) == 0);
  CHECK(attrs["memory_gate"] == "pruned");
  CHECK(attrs["estimated_peak_mb"].get<double>() == 80.06);
  CHECK_FALSE(attrs.contains("trained_batch_size"));
  CHECK_FALSE(attrs.contains("oom_retries"));
}

TEST_CASE("a trial without bfhpo's attributes (an external objective) has no facts but its state and value") {
  hpo::FrozenTrial t;
  t.number = 2;
  t.state = hpo::TrialState::Complete;
  t.values = {0.5};
  const report::TrialFacts facts = report::trial_facts(t);
  CHECK(facts.value == 0.5);
  CHECK_FALSE(facts.launched());
  CHECK(facts.gate.empty());
  CHECK(report::dashboard_user_attrs(facts).empty());
}
