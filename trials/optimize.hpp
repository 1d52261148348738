// `bfhpo optimize`: creates or resumes a training study from its journal and
// runs trials until the study holds n_trials finished trials (whoever ran
// them: several processes may share the journal), the timeout passes, or the
// run is interrupted. On start, RUNNING trials whose worker is gone (a kill -9,
// a crash) become FAIL and are re-queued with the same params, so no finished
// trial is lost and the interrupted one runs again. A worker that finds no
// trial left to start waits while other workers' trials run and re-queues
// those whose worker dies (Study::recover_stale_trials), so the survivors
// finish the study.
#pragma once

#include "trials/runner.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

namespace bfhpo::trials {

struct OptimizeOptions {
  std::filesystem::path study_file;
  std::optional<std::string> storage;  // override the study's storage (a journal path or a postgresql:// URL)
  std::optional<int> n_trials;       // override the study's n_trials
  std::optional<double> timeout_s;   // override the study's timeout_s
  std::optional<uint64_t> seed;      // override the study's seed
  std::optional<bool> memory_gate;   // override memory.gate

  // n_trials >= 1, a finite timeout > 0: the command-line overrides obey the study file's rules.
  std::optional<ConfigProblem> problem() const;
};

struct OptimizeSummary {
  std::vector<TrialOutcome> outcomes;  // the trials this run ran, in order
  std::vector<int> recovered;          // trials re-queued on start
  std::vector<hpo::FrozenTrial> trials;  // the whole study at the end
  std::optional<hpo::FrozenTrial> best;
  int n_trials = 0;
  bool interrupted = false;
  bool timed_out = false;
  double seconds = 0.0;
  std::string device;
  std::optional<double> budget_mb;
  std::string metric;                  // the objective's name (Objective::name)
};

// `interrupted`: the signal that stops the run (SIGINT, SIGTERM), set by the
// caller's signal handler; the running trial is re-queued with
// interruption_reason (trials/runner.hpp).
OptimizeSummary optimize_study(const OptimizeOptions& options, const TrialObserver& observer = {},
                               const std::atomic<int>* interrupted = nullptr);

// How often a worker with no trial left to start looks at the other workers' trials.
inline constexpr std::chrono::milliseconds kWaitForWorkers{500};

}  // namespace bfhpo::trials
