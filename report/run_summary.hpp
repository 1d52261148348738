// The text `bfhpo optimize` prints at the end of a run: the study's counts,
// what this run did, what the memory gate decided (pruned before launch,
// re-chunked), estimate against measured peak, every OOM ladder with the
// configuration it ended on, the pruner's stops, and the best trial with its
// diagnostics, and the memory frontier (report/memory_frontier.hpp) at its
// default sizes. A pure function of the trials, tested without a terminal.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::report {

struct RunInfo {
  std::vector<int> ran;        // numbers of the trials this run ran, in order
  std::vector<int> recovered;  // trials re-queued on start (their worker was gone)
  int n_trials = 0;            // the study's target of finished trials
  double seconds = 0.0;
  std::string device;
  std::optional<double> budget_mb;
  bool interrupted = false;
  bool timed_out = false;
  std::string metric = "value";  // the objective's name
};

std::string run_summary(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials, const RunInfo& run);

}  // namespace bfhpo::report
