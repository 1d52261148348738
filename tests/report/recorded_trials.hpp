// Trials as trials/runner.cpp records them in the journal (the bfhpo:*
// system attributes), for the report layer's tests.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <filesystem>
#include <string>

namespace bfhpo::test {

inline nlohmann::json memory_json(std::optional<int64_t> chunk, bool checkpointing) {
  return {{"item_chunk_size", chunk ? nlohmann::json(*chunk) : nlohmann::json()},
          {"gradient_checkpointing", checkpointing}};
}

// A launched trial: gate decision, estimate, measured peak, trained config, seconds.
inline hpo::FrozenTrial launched_trial(int number, hpo::TrialState state, std::optional<double> value,
                                       const std::string& gate, std::optional<int64_t> chunk, int64_t batch,
                                       double estimated_mb, double measured_mb, double seconds) {
  hpo::FrozenTrial t;
  t.number = number;
  t.state = state;
  if (value) t.values = {*value};
  t.params = {{"x", 0.1 * number}};
  t.distributions = {{"x", hpo::FloatDistribution{0.0, 10.0, false, std::nullopt}}};
  t.intermediate_values = {{1, 2.0 - 0.1 * number}, {2, 1.5 - 0.1 * number}};
  auto& a = t.system_attrs;
  a["bfhpo:gate"] = {{"decision", gate},
                     {"configured", memory_json(std::nullopt, false)},
                     {"chosen", memory_json(chunk, chunk.has_value())}};
  a["bfhpo:estimated_peak_mb"] = estimated_mb;
  a["bfhpo:measured_peak_mb"] = measured_mb;
  a["bfhpo:budget_mb"] = 32.0;
  a["bfhpo:batch_size"] = batch;
  a["bfhpo:item_chunk_size"] = chunk ? nlohmann::json(*chunk) : nlohmann::json();
  a["bfhpo:gradient_checkpointing"] = chunk.has_value();
  a["bfhpo:oom_history"] = nlohmann::json::array();
  a["bfhpo:seconds"] = seconds;
  return t;
}

inline hpo::FrozenTrial memory_pruned_trial(int number, double estimated_mb) {
  hpo::FrozenTrial t;
  t.number = number;
  t.state = hpo::TrialState::Pruned;
  t.params = {{"x", 0.1 * number}};
  t.distributions = {{"x", hpo::FloatDistribution{0.0, 10.0, false, std::nullopt}}};
  t.system_attrs["bfhpo:gate"] = {{"decision", "pruned"},
                                  {"configured", memory_json(std::nullopt, false)},
                                  {"chosen", memory_json(1, true)}};
  t.system_attrs["bfhpo:estimated_peak_mb"] = estimated_mb;
  t.system_attrs["bfhpo:measured_peak_mb"] = 0.0;
  t.system_attrs["bfhpo:budget_mb"] = 32.0;
  t.system_attrs["bfhpo:seconds"] = 0.01;
  t.system_attrs["bfhpo:fail_reason"] = "memory: estimated peak 80.1 MB exceeds the budget of 32.0 MB";
  return t;
}

inline hpo::StudySpec tiny_study_spec(const std::filesystem::path& dir) {
  return hpo::parse_study_spec(
      nlohmann::json::parse(R"({"name": "report-unit", "direction": "minimize", "n_trials": 6,
                                 "search_space": {"x": {"type": "float", "low": 0, "high": 10}}})"),
      dir / "study.json");
}

}  // namespace bfhpo::test
