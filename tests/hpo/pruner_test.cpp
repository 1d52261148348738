#include "hpo/pruner.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bfhpo::hpo;

namespace {

FrozenTrial trial_with(int number, TrialState state, std::vector<double> curve) {
  FrozenTrial t;
  t.number = number;
  t.state = state;
  for (std::size_t step = 0; step < curve.size(); ++step) t.intermediate_values[static_cast<int>(step)] = curve[step];
  if (state == TrialState::Complete && !curve.empty()) t.values = {curve.back()};
  return t;
}

std::vector<FrozenTrial> completed_curves(int n) {
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < n; ++i) trials.push_back(trial_with(i, TrialState::Complete, {1.0 + i, 0.5 + i, 0.25 + i}));
  return trials;  // at step 1 the values are 0.5, 1.5, ..., median n/2 - 0.5 + 0.5
}

}  // namespace

TEST_CASE("median pruner stops a trial worse than the median at its step and keeps one better") {
  PercentilePruner pruner;  // Optuna's defaults: 5 startup trials, no warm-up
  auto trials = completed_curves(5);  // step-1 values 0.5 1.5 2.5 3.5 4.5: median 2.5
  CHECK(pruner.decide(trial_with(9, TrialState::Running, {9.0, 2.6}), trials, StudyDirection::Minimize).prune);
  CHECK_FALSE(pruner.decide(trial_with(9, TrialState::Running, {9.0, 2.4}), trials, StudyDirection::Minimize).prune);
  // Its best value so far counts, not the last one.
  CHECK_FALSE(pruner.decide(trial_with(9, TrialState::Running, {0.1, 2.6}), trials, StudyDirection::Minimize).prune);
  // Maximize flips the comparison.
  CHECK_FALSE(pruner.decide(trial_with(9, TrialState::Running, {0.0, 2.6}), trials, StudyDirection::Maximize).prune);
  CHECK(pruner.decide(trial_with(9, TrialState::Running, {0.0, 2.4}), trials, StudyDirection::Maximize).prune);
  CHECK(pruner.decide(trial_with(9, TrialState::Running, {NAN}), trials, StudyDirection::Minimize).prune);
}

TEST_CASE("median pruner waits for startup trials, warm-up steps and the interval") {
  auto bad = trial_with(9, TrialState::Running, {9.0, 9.0, 9.0});
  CHECK_FALSE(PercentilePruner().decide(bad, completed_curves(4), StudyDirection::Minimize).prune);
  PercentilePrunerOptions warm;
  warm.n_warmup_steps = 3;
  CHECK_FALSE(PercentilePruner(warm).decide(bad, completed_curves(5), StudyDirection::Minimize).prune);
  PercentilePrunerOptions every_other;
  every_other.interval_steps = 2;  // decides at steps 0, 2, 4
  auto at_step1 = trial_with(9, TrialState::Running, {9.0, 9.0});
  CHECK_FALSE(PercentilePruner(every_other).decide(at_step1, completed_curves(5), StudyDirection::Minimize).prune);
  CHECK(PercentilePruner(every_other).decide(bad, completed_curves(5), StudyDirection::Minimize).prune);
}

TEST_CASE("successive halving promotes the top 1/eta of a rung and records the rung") {
  SuccessiveHalvingOptions options;
  options.min_resource = 1;
  options.reduction_factor = 2;
  SuccessiveHalvingPruner pruner(options);
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 4; ++i) {
    FrozenTrial t = trial_with(i, TrialState::Complete, {0.0, 1.0 * i});
    t.system_attrs["completed_rung_0"] = 1.0 * i;  // rung 0 is at step 1
    trials.push_back(t);
  }
  // Values at rung 0 with the new one: {0,1,2,3,x}; 5/2-1 = 1 -> must be <= second best.
  auto good = pruner.decide(trial_with(7, TrialState::Running, {0.0, 0.5}), trials, StudyDirection::Minimize);
  CHECK_FALSE(good.prune);
  REQUIRE(good.system_attrs.count("completed_rung_0"));
  CHECK(good.system_attrs["completed_rung_0"].get<double>() == 0.5);
  auto poor = pruner.decide(trial_with(7, TrialState::Running, {0.0, 2.5}), trials, StudyDirection::Minimize);
  CHECK(poor.prune);
  // Before the first rung's step nothing is decided or recorded.
  auto early = pruner.decide(trial_with(7, TrialState::Running, {99.0}), trials, StudyDirection::Minimize);
  CHECK_FALSE(early.prune);
  CHECK(early.system_attrs.empty());
}

TEST_CASE("a prune names the trial's value and the threshold it failed; a kept trial has no explanation") {
  auto trials = completed_curves(5);  // step-1 values 0.5 1.5 2.5 3.5 4.5: median 2.5
  const auto pruned = PercentilePruner().decide(trial_with(9, TrialState::Running, {9.0, 2.6}), trials,
                                                StudyDirection::Minimize);
  REQUIRE(pruned.prune);
  CHECK_THAT(pruned.explanation, Catch::Contains("step 1") && Catch::Contains("best value 2.6") &&
                                     Catch::Contains("median 2.5") && Catch::Contains("of 5 completed trials"));
  CHECK(PercentilePruner().decide(trial_with(9, TrialState::Running, {9.0, 2.4}), trials, StudyDirection::Minimize)
            .explanation.empty());

  SuccessiveHalvingOptions options;
  options.reduction_factor = 2;
  std::vector<FrozenTrial> rung;
  for (int i = 0; i < 4; ++i) {
    FrozenTrial t = trial_with(i, TrialState::Complete, {0.0, 1.0 * i});
    t.system_attrs["completed_rung_0"] = 1.0 * i;
    rung.push_back(t);
  }
  // Rung 0 holds {0, 1, 2, 3, 2.5}: the top 1/2 ends at the second best, 1.
  const auto poor = SuccessiveHalvingPruner(options).decide(trial_with(7, TrialState::Running, {0.0, 2.5}), rung,
                                                            StudyDirection::Minimize);
  REQUIRE(poor.prune);
  CHECK_THAT(poor.explanation, Catch::Contains("rung 0") && Catch::Contains("value 2.5") &&
                                   Catch::Contains("top 1/2 of 5 trials") && Catch::Contains("threshold 1)"));
}

TEST_CASE("pruner options are validated and name the field") {
  CHECK(make_pruner({{"type", "none"}}, "s.json") == nullptr);
  CHECK(make_pruner({{"type", "median"}, {"n_warmup_steps", 3}}, "s.json") != nullptr);
  CHECK_THROWS_WITH(make_pruner({{"type", "median"}, {"interval_steps", 0}}, "s.json"),
                    Catch::Contains("s.json") && Catch::Contains("pruner.interval_steps"));
  CHECK_THROWS_WITH(make_pruner({{"type", "hyperband"}}, "s.json"), Catch::Contains("pruner.type"));
}

TEST_CASE("the percentile pruner's threshold is numpy's linear percentile, mirrored for a maximized objective") {
  // Completed step-0 values 1..8 in a shuffled order: the 75th percentile lies at rank 0.75 * 7 = 5.25, so
  // 6 + 0.25 * (7 - 6) = 6.25; for maximize the 25th, at rank 1.75: 2.75.
  std::vector<FrozenTrial> trials;
  for (double v : {5.0, 2.0, 8.0, 1.0, 7.0, 3.0, 6.0, 4.0})
    trials.push_back(trial_with(static_cast<int>(trials.size()), TrialState::Complete, {v}));
  PercentilePrunerOptions options;
  options.percentile = 75.0;
  const PercentilePruner pruner(options);
  const auto decide = [&](double value, StudyDirection direction) {
    return pruner.decide(trial_with(20, TrialState::Running, {value}), trials, direction);
  };
  CHECK_FALSE(decide(6.24, StudyDirection::Minimize).prune);
  CHECK(decide(6.26, StudyDirection::Minimize).prune);
  CHECK_THAT(decide(6.26, StudyDirection::Minimize).explanation, Catch::Contains("the 75th percentile 6.25"));
  CHECK(decide(2.74, StudyDirection::Maximize).prune);
  CHECK_FALSE(decide(2.76, StudyDirection::Maximize).prune);
  // At the 50th percentile the same rule is the median pruner, on even and odd counts.
  for (std::size_t n : {7u, 8u}) {
    const std::vector<FrozenTrial> some(trials.begin(), trials.begin() + static_cast<std::ptrdiff_t>(n));
    for (double value = 0.0; value <= 9.0; value += 0.25) {
      const FrozenTrial running = trial_with(20, TrialState::Running, {value});
      PercentilePrunerOptions fifty;
      fifty.percentile = 50.0;
      CHECK(PercentilePruner(fifty).decide(running, some, StudyDirection::Minimize).prune ==
            PercentilePruner().decide(running, some, StudyDirection::Minimize).prune);
      // The median of 5 2 8 1 7 3 6 (odd) is 5; of all eight, 4.5.
      CHECK(PercentilePruner().decide(running, some, StudyDirection::Minimize).prune == (value > (n == 7 ? 5.0 : 4.5)));
    }
  }
}

TEST_CASE("a percentile pruner is read from a study file; the percentile lies strictly between 0 and 100") {
  CHECK(make_pruner({{"type", "percentile"}, {"percentile", 75}}, "s.json") != nullptr);
  CHECK_THROWS_WITH(make_pruner({{"type", "percentile"}, {"percentile", 100}}, "s.json"),
                    Catch::Contains("s.json") && Catch::Contains("pruner.percentile"));
  CHECK_THROWS_WITH(make_pruner({{"type", "median"}, {"percentile", 75}}, "s.json"),
                    Catch::Contains("pruner.percentile"));  // Optuna's MedianPruner has no percentile either
}
