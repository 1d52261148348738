#include "hpo/study.hpp"

#include "common/user_error.hpp"
#include "hpo/fixed_params.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/slurm_job.hpp"
#include "hpo/storage/open_storage.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "hpo/storage/process_liveness.hpp"
#include "hpo/trial_attrs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

namespace bfhpo::hpo {
namespace {

// The worker recorded on a trial (kWorkerAttr), if any, and whether it runs.
struct Worker {
  std::string host;
  long pid = 0;
  Liveness liveness = Liveness::Unknown;
};
std::optional<Worker> worker_of(const FrozenTrial& trial) {
  const nlohmann::json* recorded = system_attr(trial, kWorkerAttr, AttrType::Object);
  if (!recorded) return std::nullopt;
  const nlohmann::json& w = *recorded;
  if (!w.contains("host") || !w["host"].is_string() || !w.contains("pid") || !w["pid"].is_number_integer())
    return std::nullopt;
  Worker worker{w["host"].get<std::string>(), w["pid"].get<long>()};
  std::optional<unsigned long long> start_time;  // absent in records of bfhpo before pid-reuse detection
  if (w.contains("start_time") && w["start_time"].is_number_unsigned()) start_time = w["start_time"].get<unsigned long long>();
  worker.liveness = process_liveness(worker.host, worker.pid, start_time);
  return worker;
}

bool is_this_process(const Worker& worker) { return worker.host == this_host() && worker.pid == ::getpid(); }

// The trial's worker is another process on this host that still exists.
std::optional<long> live_other_worker(const FrozenTrial& trial) {
  const auto worker = worker_of(trial);
  if (!worker || worker->liveness != Liveness::Alive || is_this_process(*worker)) return std::nullopt;
  return worker->pid;
}

int count_in(const std::vector<FrozenTrial>& trials, TrialState state) {
  int n = 0;
  for (const auto& t : trials) n += t.state == state;
  return n;
}

}  // namespace

bool room_to_claim(const std::vector<FrozenTrial>& trials, int n_trials) {
  return count_finished(trials) + count_in(trials, TrialState::Running) < n_trials;
}

bool room_to_create(const std::vector<FrozenTrial>& trials, int n_trials) {
  return count_finished(trials) + count_in(trials, TrialState::Running) + count_in(trials, TrialState::Waiting) <
         n_trials;
}

int count_finished(const std::vector<FrozenTrial>& trials) {
  std::set<int64_t> requeued;
  for (const auto& t : trials)
    if (const auto from = integer_attr(t, kRequeuedFromAttr)) requeued.insert(*from);
  int n = 0;
  for (const auto& t : trials)
    n += t.state == TrialState::Complete || t.state == TrialState::Pruned ||
         (t.state == TrialState::Fail && !requeued.count(t.number));
  return n;
}

std::optional<FrozenTrial> best_of(const std::vector<FrozenTrial>& trials, StudyDirection direction,
                                   std::size_t objective) {
  const bool constrained = has_constraints(trials);
  const FrozenTrial* best = nullptr;
  for (const auto& t : trials) {
    if (t.state != TrialState::Complete || t.values.size() <= objective || std::isnan(t.values[objective]) ||
        (constrained && !is_feasible(t)))
      continue;
    const double v = t.values[objective];
    if (!best || (direction == StudyDirection::Minimize ? v < best->values[objective] : v > best->values[objective]))
      best = &t;
  }
  if (!best) return std::nullopt;
  return *best;
}

namespace {

std::unique_ptr<Storage> open_study_storage(const StudySpec& spec, Study::Open open) {
  const std::string where = spec.storage.string();
  if (open != Study::Open::CreateIfMissing && !is_postgres_url(where) && !std::filesystem::exists(spec.storage))
    throw UserError::at(printable_storage(where), "", "the study has no journal yet",
                        "run `bfhpo ask` or `bfhpo optimize` on " + spec.source.string() + " first");
  return open_storage(where, open == Study::Open::ReadOnly ? StorageAccess::ReadOnly : StorageAccess::ReadWrite);
}

bool always(const std::vector<FrozenTrial>&) { return true; }

nlohmann::json heartbeat_attrs() { return {{kHeartbeatAttr, unix_seconds_now()}}; }

// A worker's trial also names its process, so a worker on this host is judged
// by its pid, and the Slurm job it runs in, so a user can find it.
nlohmann::json worker_attrs() {
  nlohmann::json attrs = heartbeat_attrs();
  attrs[kWorkerAttr] = {{"host", this_host()}, {"pid", ::getpid()}};
  if (const auto start_time = process_start_time(::getpid())) attrs[kWorkerAttr]["start_time"] = *start_time;
  if (const auto job = slurm_job_from_environment()) attrs[kWorkerAttr]["slurm"] = to_json(*job);
  return attrs;
}

}  // namespace

Study::Study(StudySpec spec, std::unique_ptr<Sampler> sampler, Open open)
    : Study(spec, open_study_storage(spec, open), std::move(sampler), open) {}

Study::Study(StudySpec spec, std::unique_ptr<Storage> storage, std::unique_ptr<Sampler> sampler, Open open)
    : spec_(std::move(spec)),
      sampler_(std::move(sampler)),
      pruner_(make_pruner(spec_.pruner, spec_.source.string())),
      storage_(std::move(storage)) {
  std::optional<int> existing = storage_->find_study(spec_.name);
  if (!existing && open != Open::CreateIfMissing) {
    std::string held;
    for (const StudyRecord& other : storage_->studies()) held += (held.empty() ? "" : ", ") + ("'" + other.name + "'");
    throw UserError::at(storage_->location(), "name",
                        "no study '" + spec_.name + "' in this storage" +
                            (held.empty() ? std::string() : " (it holds " + held + ")"),
                        "correct \"name\" in " + spec_.source.string() +
                            ", or run `bfhpo ask` or `bfhpo optimize` first");
  }
  if (open == Open::ReadOnly) {
    study_id_ = *existing;
    const auto studies = storage_->studies();
    const auto record = std::find_if(studies.begin(), studies.end(), [&](const StudyRecord& s) { return s.study_id == study_id_; });
    if (record->directions != spec_.directions())
      throw UserError::at(storage_->location(), "direction",
                          "study '" + spec_.name + "' was created to " + to_string(record->directions) +
                              ", the study file says " + to_string(spec_.directions()),
                          "use the study's directions, or another study name");
  } else {
    study_id_ = storage_->get_or_create_study(spec_.name, spec_.directions());
    // Named objectives name the dashboard's axes from the start (Optuna's set_metric_names).
    if (spec_.named_objectives()) {
      std::vector<std::string> names;
      for (const ObjectiveSpec& objective : spec_.objectives) names.push_back(objective.metric);
      set_metric_names(names);
    }
  }
  spec_.search_space.check_compatible(storage_->trials_of(study_id_), spec_.source.string());
}

std::optional<AskedTrial> Study::claim_waiting(const Admission& admit, const nlohmann::json& system_attrs,
                                               const FeasiblePredicate& feasible) {
  for (;;) {
    const std::optional<int> trial_id = storage_->claim_waiting_trial(study_id_, admit, system_attrs);
    if (!trial_id) return std::nullopt;
    const FrozenTrial claimed = storage_->trial(*trial_id);  // a copy: the writes below may move the storage's trials
    AskedTrial asked;
    asked.number = claimed.number;
    asked.trial_id = *trial_id;
    asked.from_queue = true;
    const auto fixed_params = claimed.system_attrs.find(kFixedParamsAttr);
    if (fixed_params == claimed.system_attrs.end() && !claimed.params.empty()) {  // bfhpo enqueue, a re-queued copy
      asked.params = claimed.params;
      return asked;
    }
    Params fixed = claimed.params;  // params already recorded win over fixed_params, as in Optuna's suggest
    if (fixed_params != claimed.system_attrs.end()) {
      const FixedParams read = read_fixed_params(*fixed_params, spec_.search_space);
      for (const std::string& warning : read.warnings)
        std::cerr << "bfhpo: warning: trial " << asked.number << ": " << warning << "\n";
      if (!read.unusable.empty()) {
        const std::string reason = "its enqueued params cannot run: " + read.unusable;
        std::cerr << "bfhpo: warning: trial " << asked.number << " is FAIL: " << reason << "\n";
        storage_->set_trial_system_attr(*trial_id, kFailReasonAttr, reason);
        storage_->set_trial_state_values(*trial_id, TrialState::Fail);
        continue;
      }
      fixed.insert(read.params.begin(), read.params.end());
    }
    complete_queued_trial(asked, claimed.params, fixed, feasible);
    return asked;
  }
}

void Study::complete_queued_trial(AskedTrial& asked, const Params& recorded, const Params& fixed,
                                  const FeasiblePredicate& feasible) {
  const SearchSpace& space = spec_.search_space;
  Params proposal;
  if (!covers_active(space, fixed)) {
    if (!sampler_) throw std::logic_error("Study: ask on a study opened without a sampler");
    // The sampler proposes the rest; its candidates are judged with the fixed values in place.
    FeasiblePredicate feasible_with_fixed;
    if (feasible)
      feasible_with_fixed = [&](const Params& candidate) {
        return feasible(complete_assignment(space, fixed, candidate, [] { return 0.5; }));
      };
    const std::vector<FrozenTrial>& trials = storage_->trials_of(study_id_);
    SampleRequest request{space, TrialSpan(trials), spec_.directions(), spec_.seed, asked.number, feasible_with_fixed};
    asked.proposal = sampler_->sample(request);
    proposal = asked.proposal.params;
  }
  // Parameters that a fixed parent newly activates and the proposal lacks come from their prior.
  std::mt19937_64 rng(trial_rng_seed(spec_.seed, asked.number) + 1);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  asked.params = complete_assignment(space, fixed, proposal, [&] { return uniform(rng); });
  Params unrecorded;
  std::map<std::string, Distribution> distributions;
  for (const auto& [name, value] : asked.params) {
    if (recorded.count(name)) continue;
    unrecorded[name] = value;
    distributions.emplace(name, space.find(name)->distribution);
  }
  if (!unrecorded.empty()) storage_->set_trial_params(asked.trial_id, unrecorded, distributions);
}

AskedTrial Study::fill_new_trial(int trial_id, const FeasiblePredicate& feasible) {
  if (!sampler_) throw std::logic_error("Study: ask on a study opened without a sampler");
  AskedTrial asked;
  asked.trial_id = trial_id;
  asked.number = storage_->trial(trial_id).number;
  // The sampler sees the trials before this one (index == number).
  const std::vector<FrozenTrial>& trials = storage_->trials_of(study_id_);
  SampleRequest request{spec_.search_space, TrialSpan(trials, static_cast<std::size_t>(asked.number)),
                        spec_.directions(), spec_.seed, asked.number, feasible};
  asked.proposal = sampler_->sample(request);
  asked.params = asked.proposal.params;
  std::map<std::string, Distribution> distributions;
  for (const auto& spec : spec_.search_space.params())
    if (asked.params.count(spec.name)) distributions.emplace(spec.name, spec.distribution);
  storage_->set_trial_params(asked.trial_id, asked.params, distributions);
  return asked;
}

AskedTrial Study::ask(const FeasiblePredicate& feasible) {
  if (auto waiting = claim_waiting(always, heartbeat_attrs(), feasible)) return *waiting;
  return fill_new_trial(*storage_->create_trial_if(study_id_, always, heartbeat_attrs()), feasible);
}

std::optional<AskedTrial> Study::ask_if_room(const FeasiblePredicate& feasible) {
  const int n_trials = spec_.n_trials;
  const Admission claim = [n_trials](const std::vector<FrozenTrial>& trials) { return room_to_claim(trials, n_trials); };
  if (auto waiting = claim_waiting(claim, worker_attrs(), feasible)) return waiting;
  const Admission create = [n_trials](const std::vector<FrozenTrial>& trials) { return room_to_create(trials, n_trials); };
  const auto created = storage_->create_trial_if(study_id_, create, worker_attrs());
  if (!created) return std::nullopt;
  return fill_new_trial(*created, feasible);
}

int Study::trial_id_of(int number) {
  storage_->sync();
  const auto& trials = storage_->trials_of(study_id_);
  if (number < 0 || number >= static_cast<int>(trials.size()))
    throw UserError::at(storage_->location(), "trial",
                        "study '" + spec_.name + "' has no trial " + std::to_string(number),
                        "use a trial number printed by `bfhpo ask` or `bfhpo status`");
  return trials[number].trial_id;
}

const FrozenTrial& Study::trial(int number) { return storage_->trial(trial_id_of(number)); }

void Study::tell(int number, TrialState state, std::optional<double> value, const std::string& reason) {
  tell(number, state, value ? std::vector<double>{*value} : std::vector<double>{}, reason);
}

void Study::tell(int number, TrialState state, const std::vector<double>& values, const std::string& reason,
                 const std::optional<std::vector<double>>& constraints) {
  const int id = trial_id_of(number);
  const FrozenTrial& current = storage_->trial(id);
  if (current.state != TrialState::Running)
    throw TrialNotRunning(UserError::at(storage_->location(), "trial",
                                        "trial " + std::to_string(number) + " is " + to_string(current.state) +
                                            ", not RUNNING",
                                        "tell only trials that `bfhpo ask` handed out and that are not finished")
                              .what());
  const std::size_t n_objectives = spec_.objectives.size();
  if (state == TrialState::Complete) {
    if (values.size() != n_objectives)
      throw UserError::at("tell", "values",
                          "a COMPLETE trial of study '" + spec_.name + "' needs " + std::to_string(n_objectives) +
                              (n_objectives == 1 ? " value" : " values, one per objective") + ", got " +
                              std::to_string(values.size()),
                          n_objectives == 1 ? "pass --value V, or --state fail"
                                            : "pass --values V1,V2,... in the order of the study's \"objectives\"");
    if (!std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }))
      throw UserError::at("tell", n_objectives == 1 ? "value" : "values", "a COMPLETE trial needs finite values",
                          "pass finite numbers, or --state fail");
  } else if (!values.empty()) {
    throw UserError::at("tell", "value", std::string("a ") + to_string(state) + " trial takes no value",
                        "drop the value");
  }
  if (constraints) check_constraint_values(number, state, *constraints);
  const bool computed = !constraints && state == TrialState::Complete && !spec_.constraints.empty();
  if (computed && !constraints_from_values(values))
    throw UserError::at(spec_.source.string(), "constraints",
                        "name metrics other than the objectives', which a trial told its values cannot meet or "
                        "miss: only bfhpo optimize, which measures them, can complete a trial of this study",
                        "let bfhpo optimize train the trial (tell it --state fail to give it up), or constrain "
                        "the objectives' metrics");
  refuse_if_held_by_another_worker(current, "telling it", "and tell another trial");
  if (!reason.empty()) storage_->set_trial_system_attr(id, kFailReasonAttr, reason);
  // As Optuna's tell: the constraints are recorded before the state, so a
  // reader never sees a finished trial of a constrained study without them.
  const std::optional<std::vector<double>> recorded = computed ? constraints_from_values(values) : constraints;
  if (recorded) storage_->set_trial_system_attr(id, kConstraintsAttr, *recorded);
  if (!storage_->set_trial_state_values(id, state, values))
    throw TrialNotRunning(UserError::at(storage_->location(), "trial",
                                        "trial " + std::to_string(number) + " was finished by another worker",
                                        "do not tell one trial twice")
                              .what());
}

void Study::check_constraint_values(int number, TrialState state, const std::vector<double>& constraints) {
  if (state == TrialState::Fail)
    throw UserError::at("tell", "constraints",
                        "a FAIL trial records no constraint values (Optuna records them for COMPLETE and PRUNED "
                        "trials only)",
                        "drop the constraint values, or tell the trial complete or pruned");
  if (!spec_.constraints.empty()) {
    if (constraints.size() != spec_.constraints.size())
      throw UserError::at("tell", "constraints",
                          "study '" + spec_.name + "' states " + std::to_string(spec_.constraints.size()) +
                              " constraints, got " + std::to_string(constraints.size()) + " values",
                          "pass one value per constraint, in the study's order");
    return;
  }
  for (const FrozenTrial& other : storage_->trials_of(study_id_)) {
    const std::size_t count = constraint_values(other).size();
    if (count == 0 || other.number == number) continue;
    if (count != constraints.size())
      throw UserError::at("tell", "constraints",
                          "trial " + std::to_string(other.number) + " of study '" + spec_.name + "' has " +
                              std::to_string(count) + " constraint values, got " + std::to_string(constraints.size()),
                          "pass the same constraints, in the same order, for every trial");
    return;
  }
}

std::optional<std::vector<double>> Study::constraints_from_values(const std::vector<double>& values) const {
  std::vector<double> constrained;
  for (const ConstraintSpec& constraint : spec_.constraints) {
    const auto objective = std::find_if(spec_.objectives.begin(), spec_.objectives.end(),
                                        [&](const ObjectiveSpec& o) { return o.metric == constraint.metric; });
    if (objective == spec_.objectives.end()) return std::nullopt;
    constrained.push_back(constraint.value(values[static_cast<std::size_t>(objective - spec_.objectives.begin())]));
  }
  return constrained;
}

void Study::report(int number, int step, double value) {
  if (spec_.multi_objective())
    throw UserError::at(spec_.source.string(), "objectives",
                        "a study of " + std::to_string(spec_.objectives.size()) +
                            " objectives takes no intermediate values (as Optuna's Trial.report)",
                        "tell the trial's final values with `bfhpo tell --values`");
  const int id = trial_id_of(number);
  if (storage_->trial(id).state != TrialState::Running)
    throw TrialNotRunning(UserError::at(storage_->location(), "trial",
                                        "trial " + std::to_string(number) + " is " +
                                            to_string(storage_->trial(id).state) + ", not RUNNING; it takes no more reports",
                                        "report only trials that are running")
                              .what());
  if (step < 0)
    throw UserError::at(storage_->location(), "step", "step " + std::to_string(step) + " is negative",
                        "report steps 0, 1, 2, ...");
  refuse_if_held_by_another_worker(storage_->trial(id), "reporting to it", "and report to another trial");
  storage_->set_trial_intermediate_value(id, step, value);
}

PruneDecision Study::should_prune(int number) {
  if (!pruner_) return {};
  const int id = trial_id_of(number);
  PruneDecision decision = pruner_->decide(storage_->trial(id), storage_->trials_of(study_id_), spec_.directions().front());
  for (const auto& [key, value] : decision.system_attrs) storage_->set_trial_system_attr(id, key, value);
  return decision;
}

int Study::enqueue(const Params& params) {
  FrozenTrial waiting;
  waiting.state = TrialState::Waiting;
  for (const auto& [name, value] : params)
    if (!spec_.search_space.find(name)) throw std::invalid_argument("enqueue: '" + name + "' is not in the search space");
  if (spec_.search_space.is_valid_assignment(params)) {
    waiting.params = params;
    for (const auto& [name, value] : params) waiting.distributions[name] = spec_.search_space.find(name)->distribution;
  } else {
    waiting.system_attrs[kFixedParamsAttr] = spec_.search_space.to_external(params);
  }
  return storage_->trial(storage_->create_trial(study_id_, &waiting)).number;
}

namespace {

bool same_external_value(const nlohmann::json& given, const nlohmann::json& recorded) {
  if (given.is_number() && recorded.is_number()) {
    const double a = given.get<double>(), b = recorded.get<double>();
    return std::abs(a - b) <= 1e-5 * std::abs(b);
  }
  return given == recorded;
}

}  // namespace

std::optional<FrozenTrial> Study::trial_with_params(const Params& params) {
  const nlohmann::json given = spec_.search_space.to_external(params);
  for (const FrozenTrial& trial : trials()) {
    const auto fixed = trial.system_attrs.find(kFixedParamsAttr);
    const nlohmann::json recorded =
        fixed != trial.system_attrs.end() ? *fixed : spec_.search_space.to_external(trial.params);
    if (!recorded.is_object() || recorded.size() != given.size()) continue;
    const bool same = std::all_of(given.items().begin(), given.items().end(), [&](const auto& item) {
      const auto r = recorded.find(item.key());
      return r != recorded.end() && same_external_value(item.value(), *r);
    });
    if (same) return trial;
  }
  return std::nullopt;
}

void Study::refuse_if_held_by_another_worker(const FrozenTrial& trial, const std::string& doing,
                                             const std::string& instead) const {
  if (const auto pid = live_other_worker(trial))
    throw UserError::at(storage_->location(), "trial",
                        "trial " + std::to_string(trial.number) + " is being trained by bfhpo optimize (pid " +
                            std::to_string(*pid) + " on this host); " + doing + " would pull it from under that worker",
                        "wait for it, or stop that worker (kill -INT " + std::to_string(*pid) +
                            ", which re-queues the trial) " + instead);
}

nlohmann::json Study::system_attrs() {
  storage_->sync();
  for (const StudyRecord& study : storage_->studies())
    if (study.study_id == study_id_) return study.system_attrs;
  return nlohmann::json::object();
}

void Study::set_metric_names(const std::vector<std::string>& names) {
  if (system_attrs().value(kMetricNamesAttr, nlohmann::json()) == nlohmann::json(names)) return;
  storage_->set_study_system_attr(study_id_, kMetricNamesAttr, names);
}

void Study::heartbeat(int number) { storage_->record_heartbeat(trial_id_of(number)); }

int Study::requeue(int number) {
  const FrozenTrial current = trial(number);
  if (current.state != TrialState::Running)
    throw UserError::at(storage_->location(), "trial",
                        "trial " + std::to_string(number) + " is " + to_string(current.state) + ", not RUNNING",
                        "requeue only RUNNING trials (see `bfhpo status`)");
  refuse_if_held_by_another_worker(current, "requeueing it", "and no requeue is needed");
  if (!fail_and_requeue(number, "released by `bfhpo requeue`"))
    throw UserError::at(storage_->location(), "trial", "trial " + std::to_string(number) + " was finished meanwhile",
                        "nothing to release");
  for (const auto& t : storage_->trials_of(study_id_))
    if (integer_attr(t, kRequeuedFromAttr) == number) return t.number;
  throw std::logic_error("requeue: the WAITING copy of trial " + std::to_string(number) + " is missing");
}

bool Study::fail_and_requeue(int number, const std::string& reason) {
  const FrozenTrial failed = trial(number);
  if (failed.state != TrialState::Running) return false;
  storage_->set_trial_system_attr(failed.trial_id, kFailReasonAttr, reason);
  if (!storage_->set_trial_state_values(failed.trial_id, TrialState::Fail)) return false;
  FrozenTrial copy;
  copy.state = TrialState::Waiting;
  copy.params = failed.params;
  copy.distributions = failed.distributions;
  copy.system_attrs[kRequeuedFromAttr] = failed.number;
  storage_->create_trial(study_id_, &copy);
  return true;
}

std::string abandoned_reason(const FrozenTrial& trial, double stale_after_s, double now) {
  if (trial.state != TrialState::Running) return "";
  if (const auto worker = worker_of(trial)) {
    if (worker->liveness == Liveness::Gone)
      return "interrupted: its worker process " + std::to_string(worker->pid) + " is gone";
    if (worker->liveness == Liveness::Alive) return "";
  }
  const std::optional<double> heartbeat = number_attr(trial, kHeartbeatAttr);
  if (!heartbeat) return "";
  const double silent_s = now - *heartbeat;
  if (silent_s <= stale_after_s) return "";
  return "stale heartbeat: no sign of life for " + std::to_string(static_cast<long>(silent_s)) + " s";
}

std::vector<int> Study::recover_stale_trials() {
  std::vector<int> failed;
  const double now = unix_seconds_now();
  for (const auto& t : trials()) {
    if (!worker_of(t)) continue;  // an ask/tell caller's trial: released by hand (tell --state fail, requeue)
    const std::string reason = abandoned_reason(t, spec_.stale_after_s, now);
    if (!reason.empty() && fail_and_requeue(t.number, reason)) failed.push_back(t.number);
  }
  return failed;
}

bool Study::other_workers_running() {
  for (const auto& t : storage_->trials_of(study_id_)) {
    if (t.state != TrialState::Running) continue;
    const auto worker = worker_of(t);
    if (worker && !is_this_process(*worker)) return true;
  }
  return false;
}

bool Study::timed_out() const {
  if (!spec_.timeout_s) return false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count() >= *spec_.timeout_s;
}

std::vector<FrozenTrial> Study::trials() {
  storage_->sync();
  return storage_->trials_of(study_id_);
}

std::optional<FrozenTrial> Study::best_trial() {
  storage_->sync();
  if (spec_.multi_objective()) throw std::logic_error("Study::best_trial: a study of several objectives has best_trials");
  return best_of(storage_->trials_of(study_id_), spec_.directions().front());
}

std::vector<FrozenTrial> Study::best_trials() {
  storage_->sync();
  return pareto_front(storage_->trials_of(study_id_), spec_.directions());
}

int Study::n_finished() {
  storage_->sync();
  return count_finished(storage_->trials_of(study_id_));
}

}  // namespace bfhpo::hpo
