// Pruners decide, after a trial reports an intermediate value, whether it
// should stop early. Semantics follow Optuna's PercentilePruner (MedianPruner
// is its 50th percentile) and SuccessiveHalvingPruner. A pruner may ask for
// trial system attributes to be recorded (successive halving records the
// rungs a trial passed), so every worker sharing the journal sees the same
// rungs.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bfhpo::hpo {

struct PruneDecision {
  bool prune = false;
  std::map<std::string, nlohmann::json> system_attrs;  // to record on the trial
  // When pruned: the rule that fired, with the trial's value and the
  // threshold it failed ("step 2: best value 1.31 is worse than the median
  // 1.18 of 4 completed trials at that step").
  std::string explanation;
};

class Pruner {
 public:
  virtual ~Pruner() = default;
  // `trial` is the running trial with its intermediate values; `trials` every
  // trial of the study (it may include `trial`).
  virtual PruneDecision decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
                               StudyDirection direction) const = 0;
};

struct PercentilePrunerOptions {
  // Prune what is worse than this percentile of the completed trials (the
  // share of them a pruned trial is worse than): 50 is Optuna's
  // MedianPruner, 75 stops only the worst quarter at each step.
  double percentile = 50.0;
  int n_startup_trials = 5;  // no pruning until this many trials completed
  int n_warmup_steps = 0;    // no pruning before this step
  int interval_steps = 1;    // only decide at every k-th step after the warm-up
  int n_min_trials = 1;      // completed trials that reported this step, at least
};

// Prunes when the trial's best intermediate value so far is worse than the
// percentile of the completed trials' values at the same step (linear
// interpolation between ranks, as numpy's and so Optuna's; for a maximized
// objective the mirrored percentile, 100 - p).
class PercentilePruner : public Pruner {
 public:
  explicit PercentilePruner(PercentilePrunerOptions options = {}) : options_(options) {}
  PruneDecision decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
                       StudyDirection direction) const override;

 private:
  PercentilePrunerOptions options_;
};

struct SuccessiveHalvingOptions {
  int min_resource = 1;       // steps of the first rung
  int reduction_factor = 4;   // keep the best 1/reduction_factor at each rung
  int min_early_stopping_rate = 0;
  int bootstrap_count = 0;    // trials needed at a rung before anyone is promoted
};

// Asynchronous successive halving (ASHA), as Optuna's SuccessiveHalvingPruner:
// at step min_resource * reduction_factor^(rate + rung) a trial records its
// value as "completed_rung_<rung>" and continues only if it is in the top
// 1/reduction_factor of the values recorded at that rung so far.
class SuccessiveHalvingPruner : public Pruner {
 public:
  explicit SuccessiveHalvingPruner(SuccessiveHalvingOptions options = {}) : options_(options) {}
  PruneDecision decide(const FrozenTrial& trial, const std::vector<FrozenTrial>& trials,
                       StudyDirection direction) const override;

 private:
  SuccessiveHalvingOptions options_;
};

// From a study's "pruner" section ({"type": "none"|"median"|"percentile"|"successive_halving", ...});
// nullptr for "none". Throws UserError naming `source` on a bad option.
std::unique_ptr<Pruner> make_pruner(const nlohmann::json& section, const std::string& source);

}  // namespace bfhpo::hpo
