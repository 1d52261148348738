// One trial end to end (DESIGN.md, "Data flow of one study"):
//   params -> TrialConfig -> memory gate (prune "memory" before launch)
//   -> probe (optional) -> fit_with_oom_retry, reporting the validation loss
//   every epoch so the pruner can stop it -> posterior diagnostics
//   -> objective values and constraints (trials/trial_metrics.hpp) -> study.tell.
// Everything a user may want later is recorded on the trial in the journal:
// system attributes bfhpo:* (estimate, measured peak, effective batch size and
// chunk, OOM attempts and ladder, seconds, device, fail/prune reason) and
// user attributes (val_nll, calibration_error, and what optuna-dashboard should
// show: report/trial_facts.hpp's dashboard_user_attrs). Weights of every
// COMPLETE trial are saved as trial-<number>.pt in the study's weights folder
// (trials/weights_folder.hpp; trial-<number>-<k>.pt when a file of another
// journal or study holds that name: never overwritten), its per-item posterior summaries (the report's
// diagnostics plots) beside them with the extension .posterior.json.
//
// Outcomes: COMPLETE; PRUNED (reason "memory" or "pruner"); FAIL (non-finite
// loss, OOM below min batch size -- reason in bfhpo:fail_reason); an
// interruption (the `interrupted` signal: Ctrl-C, or SIGTERM from a
// scheduler) marks the trial FAIL with interruption_reason and re-queues its
// params. Other errors are bugs and propagate
// after the trial is marked FAIL with the message.
#pragma once

#include "hpo/study.hpp"
#include "memory/estimate.hpp"
#include "trials/oom_retry.hpp"
#include "trials/study_settings.hpp"
#include "trials/trainer.hpp"
#include "trials/trial_config.hpp"

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>

namespace bfhpo::trials {

// What every trial of one study run shares.
struct StudyContext {
  hpo::StudySpec spec;
  StudySettings settings;
  TrialConfig fixed;                  // the study's fixed configuration, checked once
  torch::Device device = torch::kCPU;
  std::optional<double> budget_mb;   // resolved ("auto" -> a fraction of the device)
  memory::DeviceProfile profile;
  std::filesystem::path weights_dir;  // weights_folder(spec)
  // The signal that stops the run (set by a signal handler), 0 while none did.
  const std::atomic<int>* interrupted = nullptr;

  static StudyContext load(const hpo::StudySpec& spec, const std::atomic<int>* interrupted);
  // The sampler's feasibility predicate: the memory gate on a proposal.
  hpo::FeasiblePredicate memory_feasibility() const;
};

struct TrialOutcome {
  int number = 0;
  hpo::TrialState state = hpo::TrialState::Fail;
  std::vector<double> values;  // one per objective, for COMPLETE
  std::string reason;  // why PRUNED / FAIL
  nlohmann::json attributes;  // what was recorded, for the summary
  bool interrupted = false;
};

struct TrialObserver {
  // The trial, its params, the study's best value so far (none before the
  // first COMPLETE trial) and how many trials the study has finished.
  std::function<void(const hpo::AskedTrial&, const nlohmann::json& params, std::optional<double> best_value,
                     int finished)>
      on_start;
  StepCallback on_step;
  std::function<void(const EpochReport&)> on_epoch;
  OomCallback on_oom;  // as it happens: what ran out of memory, what the ladder tries next
  std::function<void(const TrialOutcome&)> on_finish;
};

TrialOutcome run_trial(hpo::Study& study, const hpo::AskedTrial& asked, const StudyContext& context,
                       const TrialObserver& observer = {});

// Why a trial stopped by `signal` is FAIL: "preempted (SIGTERM)" for SIGTERM
// (what Slurm sends before a time limit, on preemption and on scancel), else
// "interrupted (Ctrl-C)".
std::string interruption_reason(int signal);

// The prefix of the reason of a trial pruned by the memory gate.
inline constexpr const char* kPruneReasonMemory = "memory";

}  // namespace bfhpo::trials
