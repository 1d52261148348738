// What bfhpo recorded about one trial, read back from the journal: the
// system attributes trials/runner.cpp writes (bfhpo:estimated_peak_mb,
// bfhpo:gate, bfhpo:oom_history, ...; README, "What each trial records") as
// typed fields, so the summary, `status`, the dashboard attributes and the
// report read them one way. A trial of an external-objective study, or one
// recorded before a field existed, simply lacks those fields.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::report {

// One rung of an OOM ladder: the configuration that ran out of memory.
struct OomRung {
  int step = 0;          // global training step (0-based)
  std::string config;    // "batch 32, chunk none"
  std::string error;     // the first line of the error
};

struct TrialFacts {
  int number = 0;
  hpo::TrialState state = hpo::TrialState::Running;
  std::optional<double> value;             // of the objective the facts were read for
  bool feasible = true;                    // meets the study's constraints (hpo/study_objectives.hpp)
  std::string reason;                      // why PRUNED / FAIL (bfhpo:fail_reason)
  std::optional<double> seconds;           // the trial's wall time
  std::optional<double> estimated_peak_mb; // at the worst-case shape, of the memory config trained with
  std::optional<double> measured_peak_mb;
  std::optional<double> budget_mb;
  // The memory gate: "fits" (as configured), "rechunked", "pruned", "off"
  // (no gate or no budget), or empty when not recorded.
  std::string gate;
  std::string gate_memory;                 // what it chose, in words: "chunk 8, checkpointing"
  std::optional<int64_t> batch_size;       // what training finished with (gate and OOM ladder applied)
  std::optional<int64_t> item_chunk_size;
  std::optional<int64_t> person_chunk_size;
  bool gradient_checkpointing = false;
  std::vector<OomRung> oom_history;
  nlohmann::json diagnostics;              // models::Diagnostics::to_json(), or null
  std::string posterior_items;             // file with models::PosteriorItems::to_json(), or empty
  std::map<int, double> intermediate_values;

  // Training started (a memory-pruned trial never allocated anything).
  bool launched() const { return batch_size.has_value() || !oom_history.empty(); }
  // The memory configuration trained with, in words: "batch 16, chunk 8, checkpointing".
  std::string trained_config() const;
};

// The objective that the one-number views rank trials by (the value column,
// the history chart, the memory frontier, the best within a budget): the
// first objective, or the first that is not the peak memory where a study
// also minimizes measured_peak_mb (the frontier's other axis).
std::size_t ranked_objective(const hpo::StudySpec& spec);
hpo::StudyDirection ranked_direction(const hpo::StudySpec& spec);
// The best trial by the ranked objective (hpo::best_of); with one objective, the study's best trial.
std::optional<hpo::FrozenTrial> ranked_best(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials);
// `value` is the trial's value of objective `objective` (0: the first).
TrialFacts trial_facts(const hpo::FrozenTrial& trial, std::size_t objective = 0);
std::vector<TrialFacts> trial_facts(const std::vector<hpo::FrozenTrial>& trials, std::size_t objective = 0);

// A memory configuration {"item_chunk_size", "person_chunk_size", "gradient_checkpointing"} in words:
// "chunk 8, checkpointing", "chunk 1, 256 persons a chunk, checkpointing".
std::string memory_in_words(const nlohmann::json& memory);

// The trial user attributes optuna-dashboard shows (it hides system
// attributes): reason, estimated and measured peak, trained batch and chunk,
// the gate's decision, OOM retries, duration, and every diagnostic flattened
// to "<parameter>.<metric>". Reals rounded to what a reader needs.
nlohmann::json dashboard_user_attrs(const TrialFacts& facts);

}  // namespace bfhpo::report
