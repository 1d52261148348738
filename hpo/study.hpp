// A study: the search space, a sampler, an optional pruner and the storage
// that holds every trial (storage/storage.hpp). All state lives in the
// storage; a Study object is a view on it that syncs before each decision, so
// several processes can drive one study and a crashed study resumes where it
// stopped.
//
// Counting: the study is done when it holds `n_trials` finished trials
// (COMPLETE, PRUNED, or FAIL that was not re-queued), whoever ran them, so a
// resumed study stops where the user meant, not n_trials later.
#pragma once

#include "common/user_error.hpp"
#include "hpo/pruner.hpp"
#include "hpo/sampler.hpp"
#include "hpo/storage/storage.hpp"
#include "hpo/study_spec.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

// System attribute names bfhpo records on trials.
inline constexpr const char* kFailReasonAttr = "bfhpo:fail_reason";   // why a trial is FAIL / PRUNED
inline constexpr const char* kRequeuedFromAttr = "bfhpo:requeued_from";  // on a WAITING copy: the FAIL trial's number
// {"host", "pid", "start_time"} of the process running the trial (start_time: see process_liveness.hpp),
// and "slurm" (hpo/slurm_job.hpp) when it runs in a Slurm job
inline constexpr const char* kWorkerAttr = "bfhpo:worker";
// Study system attribute of Optuna's Study.set_metric_names (optuna-dashboard's axis titles).
inline constexpr const char* kMetricNamesAttr = "study:metric_names";

// tell or report on a trial that is not RUNNING (finished, by another
// writer too: an Optuna worker, `bfhpo tell`): a UserError at the command
// line; a worker training the trial catches it and drops its own result.
class TrialNotRunning : public UserError {
 public:
  using UserError::UserError;
};

struct AskedTrial {
  int number = 0;
  int trial_id = 0;
  Params params;
  bool from_queue = false;  // a WAITING (enqueued or re-queued) trial was claimed
  Proposal proposal;        // what the sampler said (empty when the queued trial left nothing to sample)
};

class Study {
 public:
  // ReadOnly: the study must exist, nothing is written and no write
  // permission is needed (status, export); the sampler may be null.
  enum class Open { CreateIfMissing, MustExist, ReadOnly };
  // Opens spec.storage (open_storage) and the study of spec.name in it. A
  // storage may hold many studies, as in Optuna: each is selected by its
  // name, and CreateIfMissing adds a study beside the others. A missing
  // journal or study with Open::MustExist or ReadOnly is a UserError (naming
  // the studies the storage holds); nothing is written then. A writable open
  // of a study with "objectives" records their metrics as Optuna's metric
  // names (set_metric_names).
  Study(StudySpec spec, std::unique_ptr<Sampler> sampler, Open open = Open::CreateIfMissing);
  // The same on a storage already open.
  Study(StudySpec spec, std::unique_ptr<Storage> storage, std::unique_ptr<Sampler> sampler, Open open);

  const StudySpec& spec() const { return spec_; }
  Storage& storage() { return *storage_; }
  int study_id() const { return study_id_; }

  // Claims the oldest WAITING trial if any, else creates a RUNNING trial and
  // fills it with the sampler's proposal. Records the trial RUNNING. A WAITING
  // trial that Optuna's enqueue_trial queued runs with its "fixed_params" and
  // sampled values for the params it does not fix.
  AskedTrial ask(const FeasiblePredicate& feasible = {});
  // As ask, for workers that share the study: a WAITING trial is claimed or
  // a new trial created only while the study's finished plus RUNNING trials
  // (plus WAITING ones, to create: see room_to_create) are fewer than
  // n_trials, checked and done in one atomic step of the
  // storage, so concurrent workers never overshoot n_trials (enqueued trials
  // included). The trial records this process as its worker (kWorkerAttr),
  // which then heartbeats. None when the study has enough trials started.
  std::optional<AskedTrial> ask_if_room(const FeasiblePredicate& feasible = {});
  // Finishes a RUNNING trial: COMPLETE with one finite value per objective,
  // PRUNED or FAIL without any. `constraints` (Optuna's constraint values,
  // feasible when all <= 0; COMPLETE and PRUNED trials only, as many as the
  // study states or, stating none, as the other trials have) are recorded
  // before the state; without them a COMPLETE trial of a constrained study
  // gets them from its values, and is refused (UserError) when a constraint
  // names a metric that is not an objective's. Throws UserError for an unknown trial or a
  // wrong count of values, TrialNotRunning for a finished one, and UserError
  // for a trial another live process on this host is training (kWorkerAttr).
  void tell(int number, TrialState state, const std::vector<double>& values, const std::string& reason = "",
            const std::optional<std::vector<double>>& constraints = std::nullopt);
  // The same for a study of one objective.
  void tell(int number, TrialState state, std::optional<double> value = std::nullopt, const std::string& reason = "");
  // An intermediate value at step >= 0; the same refusals as tell, and a
  // UserError in a study of several objectives (as Optuna's Trial.report).
  void report(int number, int step, double value);
  // Asks the pruner about the trial's latest report; records what it asks to.
  PruneDecision should_prune(int number);
  // Adds a WAITING trial (served first by ask) and returns its number. A full
  // assignment is recorded as the trial's params; some of the parameters are
  // recorded as Optuna's enqueue_trial does (system attribute "fixed_params",
  // external values), and the worker that claims it samples the others.
  int enqueue(const Params& params);
  // The first trial, in any state, that fixes or ran with exactly these
  // params: Optuna's enqueue_trial(skip_if_exists=True) rule (the same names,
  // numbers equal to a relative 1e-5, as numpy.isclose; a trial's
  // "fixed_params" when it has them, else its params).
  std::optional<FrozenTrial> trial_with_params(const Params& params);
  void heartbeat(int number);
  // The study's system attributes as the storage holds them now.
  nlohmann::json system_attrs();
  // Names the objective as Optuna's Study.set_metric_names does; writes only when it changed.
  void set_metric_names(const std::vector<std::string>& names);
  // A RUNNING trial that did not finish through no fault of its params (the
  // worker was interrupted or died) becomes FAIL with `reason` and a WAITING
  // copy with the same params is queued. False when another worker finished
  // or recovered it first.
  bool fail_and_requeue(int number, const std::string& reason);
  // fail_and_requeue by hand (`bfhpo requeue`) for a trial whose caller is
  // gone; returns the WAITING copy's number. UserError for a trial that is not
  // RUNNING or that a live worker on this host trains.
  int requeue(int number);
  // RUNNING trials of workers (kWorkerAttr) that are gone become FAIL and
  // are re-queued (as above): a worker process on this host that no longer
  // exists, or a worker elsewhere silent for longer than spec.stale_after_s.
  // A live process on this host keeps its trial however long it is silent
  // (stopped, swapped out). Trials of ask/tell callers are never taken: see
  // abandoned_reason. Returns the failed numbers.
  std::vector<int> recover_stale_trials();
  // Whether RUNNING trials of other workers (kWorkerAttr) remain, as of the
  // last sync: a worker that finds no room waits for them to finish or to be
  // recovered.
  bool other_workers_running();

  std::vector<FrozenTrial> trials();  // replays first
  const FrozenTrial& trial(int number);
  // The best COMPLETE (and feasible, see study_objectives.hpp) trial of a
  // single-objective study; a logic_error for several objectives.
  std::optional<FrozenTrial> best_trial();
  // Optuna's best_trials: the Pareto front (hpo/pareto_front.hpp).
  std::vector<FrozenTrial> best_trials();
  int n_finished();
  bool is_done() { return n_finished() >= spec_.n_trials; }
  // True once spec.timeout_s has passed since this Study was opened.
  bool timed_out() const;

 private:
  int trial_id_of(int number);
  // UserError when a live bfhpo optimize on this host trains `trial`:
  // `doing` it ("telling it") would pull it from under that worker; `instead` ends the fix.
  void refuse_if_held_by_another_worker(const FrozenTrial& trial, const std::string& doing,
                                        const std::string& instead) const;
  // Claims the oldest WAITING trial (admit, system_attrs as the storage's
  // claim_waiting_trial) and gives it its params: those recorded on it, else
  // Optuna's enqueued "fixed_params" (hpo/fixed_params.hpp) with the sampler
  // proposing the rest. A trial whose fixed params cannot run is FAIL and
  // the next WAITING trial is claimed.
  std::optional<AskedTrial> claim_waiting(const Admission& admit, const nlohmann::json& system_attrs,
                                          const FeasiblePredicate& feasible);
  // Completes a claimed trial's params from `fixed` (recorded ones included)
  // and records those not `recorded` yet.
  void complete_queued_trial(AskedTrial& asked, const Params& recorded, const Params& fixed,
                             const FeasiblePredicate& feasible);
  AskedTrial fill_new_trial(int trial_id, const FeasiblePredicate& feasible);
  // UserError unless `constraints` may be recorded for trial `number` told
  // `state`: COMPLETE or PRUNED (as Optuna), one value per constraint the
  // study states, else as many as the other trials have.
  void check_constraint_values(int number, TrialState state, const std::vector<double>& constraints);
  // The study's constraint values from a trial's objective values, when every
  // constraint names an objective's metric; none otherwise.
  std::optional<std::vector<double>> constraints_from_values(const std::vector<double>& values) const;

  StudySpec spec_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Pruner> pruner_;
  std::unique_ptr<Storage> storage_;
  int study_id_ = 0;
  std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
};

// Why a RUNNING trial looks abandoned (empty when it may still run): its
// worker process on this host is gone, or (a worker on another host, or an
// ask/tell caller) its last heartbeat is older than stale_after_s.
std::string abandoned_reason(const FrozenTrial& trial, double stale_after_s, double now);
// Finished trials the study counts toward n_trials (see above).
int count_finished(const std::vector<FrozenTrial>& trials);
// ask_if_room's admissions, judged on the trials as the storage holds them at
// that instant. A WAITING trial may be claimed while finished plus RUNNING
// trials are fewer than n_trials. A new trial may be created only while
// finished, RUNNING and WAITING trials together are fewer: a WAITING trial
// that appeared after the claim was tried (a dead worker's trial re-queued
// by another worker) runs before any new one, so the study never ends with a
// re-queued trial left WAITING.
bool room_to_claim(const std::vector<FrozenTrial>& trials, int n_trials);
bool room_to_create(const std::vector<FrozenTrial>& trials, int n_trials);
// The best COMPLETE trial of `trials` by its value of objective `objective`
// in `direction` (feasible, where any trial has constraints), if any; the
// first of equal ones.
std::optional<FrozenTrial> best_of(const std::vector<FrozenTrial>& trials, StudyDirection direction,
                                   std::size_t objective = 0);

}  // namespace bfhpo::hpo
