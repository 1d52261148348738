#include "hpo/study.hpp"
#include "report/run_summary.hpp"
#include "report/status_table.hpp"
#include "tests/report/recorded_trials.hpp"

#include <catch2/catch.hpp>

using namespace bfhpo;
using nlohmann::json;
using hpo::TrialState;

namespace {

// 0: fits as configured; 1, 2: re-chunked to chunk 8; 3: pruned by the gate;
// 4: survived an OOM and trained with batch 8 (proposed 16); 5: pruned by the pruner.
std::vector<hpo::FrozenTrial> six_trials() {
  std::vector<hpo::FrozenTrial> trials{
      test::launched_trial(0, TrialState::Complete, 1.5, "fits", std::nullopt, 16, 10.0, 9.5, 4.0),
      test::launched_trial(1, TrialState::Complete, 1.2, "rechunked", 8, 16, 20.0, 19.0, 5.0),
      test::launched_trial(2, TrialState::Complete, 1.4, "rechunked", 8, 16, 20.0, 18.0, 5.0),
      test::memory_pruned_trial(3, 80.06),
      test::launched_trial(4, TrialState::Complete, 1.3, "fits", std::nullopt, 8, 16.0, 16.0, 6.0),
      test::launched_trial(5, TrialState::Pruned, std::nullopt, "fits", std::nullopt, 16, 10.0, 9.0, 2.0)};
  trials[4].params["training.batch_size"] = 16;
  trials[4].system_attrs["bfhpo:oom_history"] =
      json::array({{{"step", 3}, {"config", "batch 16, chunk none"}, {"error", "CUDA out of memory"}}});
  trials[5].system_attrs["bfhpo:fail_reason"] =
      "pruner: stopped after epoch 1 (step 1: best value 1.9 is worse than the median 1.5 of 4 completed trials at that step)";
  return trials;
}

}  // namespace

TEST_CASE("the run summary counts the gate's prunes and re-chunks, compares peaks, and lists each ladder") {
  const auto dir = std::filesystem::temp_directory_path();
  report::RunInfo run;
  run.ran = {0, 1, 2, 3, 4, 5};
  run.n_trials = 6;
  run.seconds = 22.0;
  run.device = "cpu";
  run.budget_mb = 32.0;
  run.metric = "val_nll";
  const std::string text = report::run_summary(test::tiny_study_spec(dir), six_trials(), run);
  CHECK_THAT(text, Catch::Contains("6/6 finished (complete 4, pruned 2, fail 0"));
  CHECK_THAT(text, Catch::Contains("6 trials in 22 s on cpu, memory budget 32.0 MB"));
  CHECK_THAT(text, Catch::Contains("memory gate: 1 of 6 pruned before launch, 2 of 5 launched re-chunked "
                                   "(2 to chunk 8, checkpointing)"));
  // measured / estimated: 0.95, 0.95, 0.9, 1.0, 0.9 -> 0.9 to 1, median 0.95.
  CHECK_THAT(text, Catch::Contains("measured 0.9-1 x the estimate over 5 trials (median 0.95)"));
  CHECK_THAT(text, Catch::Contains("trial 4 survived 1 OOM: [batch 16, chunk none] -> trained with batch 8, chunk none"));
  CHECK_THAT(text, Catch::Contains("trial 3 PRUNED: memory: estimated peak 80.1 MB"));
  CHECK_THAT(text, Catch::Contains("trial 5 PRUNED: pruner: stopped after epoch 1 (step 1: best value 1.9"));
  CHECK_THAT(text, Catch::Contains("best trial 1: val_nll 1.2"));
  CHECK_THAT(text, Catch::Contains("trained with batch 16, chunk 8, checkpointing in 5.0 s, peak 19.0 MB (estimated 20.0 MB)"));
  // Trials another run finished are not this run's.
  run.ran = {5};
  const std::string later = report::run_summary(test::tiny_study_spec(dir), six_trials(), run);
  CHECK_THAT(later, Catch::Contains("0 of 1 launched re-chunked"));
  CHECK_THAT(later, !Catch::Contains("OOM"));
}

TEST_CASE("status shows the batch and chunk trained with, peaks, duration and why a trial stopped") {
  const std::string table = report::status_table(test::tiny_study_spec(std::filesystem::temp_directory_path()), six_trials());
  std::istringstream lines(table);
  std::string line, trial4, after3;
  bool next_is_after3 = false;
  while (std::getline(lines, line)) {
    if (next_is_after3) after3 = line;
    next_is_after3 = line.rfind("     3  PRUNED", 0) == 0;
    if (line.rfind("     4  ", 0) == 0) trial4 = line;
  }
  // Trial 4 was proposed batch 16 and trained with 8 after its OOM.
  CHECK_THAT(trial4, Catch::Contains("COMPLETE") && Catch::Contains("   8 ") && Catch::Contains("16.0") &&
                         Catch::Contains("6.0 s"));
  CHECK_THAT(after3, Catch::StartsWith("        why: memory: estimated peak 80.1 MB"));
  CHECK_THAT(table, Catch::Contains("8+ckpt"));
  CHECK_THAT(table, Catch::Contains("best: trial 1 value 1.2"));
}

TEST_CASE("status shows the Slurm job, task and node of a running trial's worker, and no worker of a finished one") {
  std::vector<hpo::FrozenTrial> trials = six_trials();
  hpo::FrozenTrial running;
  running.number = 6;
  running.state = TrialState::Running;
  running.system_attrs[hpo::kWorkerAttr] = {
      {"host", "gpu07"}, {"pid", 4242}, {"slurm", {{"job_id", "4700"}, {"array_task_id", "2"}, {"node", "gpu07"}}}};
  trials.push_back(running);
  trials[0].system_attrs[hpo::kWorkerAttr] = {{"host", "gpu08"}, {"pid", 77}};
  const std::string table = report::status_table(test::tiny_study_spec(std::filesystem::temp_directory_path()), trials);
  CHECK_THAT(table, Catch::Contains("     6  RUNNING") &&
                        Catch::Contains("\n        worker: slurm job 4700_2 on node gpu07 (pid 4242)\n"));
  CHECK_THAT(table, !Catch::Contains("pid 77"));
}
