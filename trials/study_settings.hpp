// The study-level sections of a training study beside the trial config
// (trial_config.hpp):
//
//   "memory":    {"budget_mb": 4096 | "auto", "auto_fraction": 0.9,
//                 "gate": true, "probe": false,
//                 "oom_retry": {"min_batch_size": 4, "backoff_factor": 2,
//                               "item_chunk_ladder": [16, 8, 4, 2, 1],
//                               "person_chunk_ladder": [1024, 256, 64]}}
//   "objective": "val_nll" | "calibration_error" |
//                {"val_nll": 1.0, "calibration_error": 10.0}   (a weighted sum)
//
// budget_mb "auto" is auto_fraction of the device's memory. On CPU the budget
// is also enforced while a trial trains (memory/cpu_memory_tracking.hpp), so
// a CPU run behaves like a GPU of that size; without budget_mb a CPU run has
// no budget and the gate has nothing to check.
#pragma once

#include "common/config_reader.hpp"
#include "hpo/study_spec.hpp"
#include "trials/oom_retry.hpp"
#include "trials/trial_config.hpp"

#include <optional>
#include <string>

namespace bfhpo::trials {

struct MemorySettings {
  std::optional<double> budget_mb;  // fixed budget
  bool budget_auto = false;         // budget = auto_fraction x the device's memory
  double auto_fraction = 0.9;
  bool gate = true;                 // prune trials whose estimate exceeds the budget, before launch
  bool probe = false;               // measure one step per memory config before training
  OomRetryOptions oom_retry;

  // The budget in MB on `device_total_bytes` of memory; none when unset.
  std::optional<double> budget_for(int64_t device_total_bytes) const;
  std::optional<ConfigProblem> problem() const;  // field relative to "memory"
};

struct Objective {
  double val_nll_weight = 1.0;
  double calibration_error_weight = 0.0;

  double value(double val_nll, double calibration_error) const;
  std::optional<ConfigProblem> problem() const;  // weights >= 0, not all zero
  // As Optuna's metric name: "val_nll", "calibration_error" or "val_nll + 10 calibration_error".
  std::string name() const;
};

struct StudySettings {
  MemorySettings memory;
  Objective objective;
};

// UserError naming the study file, the field and the fix.
StudySettings parse_study_settings(const hpo::StudySpec& study);
// The checks across sections: memory.oom_retry.min_batch_size is at most the
// largest batch size a trial can have (fixed or searched).
void check_batch_sizes(const StudySettings& settings, const TrialConfig& fixed, const hpo::StudySpec& study);

}  // namespace bfhpo::trials
