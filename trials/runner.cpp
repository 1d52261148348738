#include "trials/runner.hpp"

#include "common/atomic_file.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "memory/cpu_memory_tracking.hpp"
#include "memory/meter.hpp"
#include "memory/oom.hpp"
#include "report/trial_facts.hpp"
#include "trials/device.hpp"
#include "trials/evaluation.hpp"
#include "trials/memory_gate.hpp"
#include "trials/oom_retry.hpp"
#include "trials/probe.hpp"
#include "trials/starting_network.hpp"
#include "trials/training_threads.hpp"
#include "trials/trial_metrics.hpp"
#include "trials/weights_folder.hpp"

#include <torch/version.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

namespace bfhpo::trials {
namespace {

constexpr double kHeartbeatEvery_s = 10.0;

// Thrown from a training callback when the run is interrupted.
struct Interrupted {};

// Records attributes on the trial as they become known.
class TrialRecord {
 public:
  TrialRecord(hpo::Study& study, const hpo::AskedTrial& asked, TrialOutcome& outcome)
      : study_(study), trial_id_(asked.trial_id), outcome_(outcome) {}
  void system(const std::string& key, const nlohmann::json& value) {
    study_.storage().set_trial_system_attr(trial_id_, "bfhpo:" + key, value);
    outcome_.attributes[key] = value;
  }
  void user(const std::string& key, const nlohmann::json& value) {
    study_.storage().set_trial_user_attr(trial_id_, key, value);
    outcome_.attributes[key] = value;
  }

 private:
  hpo::Study& study_;
  int trial_id_;
  TrialOutcome& outcome_;
};

// <weights dir>/trial-<number>.pt, or trial-<number>-<k>.pt when that name
// is taken: a file there belongs to another journal (one renamed away, whose
// trials still point to it) or another study of the storage, and is never
// overwritten. The name is reserved
// by creating the file exclusively.
std::filesystem::path reserve_weights_file(const std::filesystem::path& dir, int number) {
  std::filesystem::create_directories(dir);
  for (int k = 1;; ++k) {
    const std::string suffix = k == 1 ? "" : "-" + std::to_string(k);
    const auto path = dir / ("trial-" + std::to_string(number) + suffix + ".pt");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return path;
    }
    if (errno != EEXIST)
      throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  }
}

nlohmann::json history_json(const std::vector<OomEvent>& history) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : history)
    out.push_back({{"step", e.step},
                   {"config", describe(e)},
                   {"bytes_requested", e.bytes_requested ? nlohmann::json(*e.bytes_requested) : nlohmann::json()},
                   {"error", e.message}});
  return out;
}

// The weights and posterior summaries a trial saved (TrialRecord's
// "weights", "posterior_items"), when no record will name them.
void remove_saved_files(const nlohmann::json& attributes) {
  std::error_code ignored;
  if (attributes.contains("weights")) {
    const std::filesystem::path weights = attributes["weights"].get<std::string>();
    std::filesystem::remove(weights, ignored);
    std::filesystem::remove(Trainer::torchscript_path(weights), ignored);
  }
  if (attributes.contains("posterior_items"))
    std::filesystem::remove(attributes["posterior_items"].get<std::string>(), ignored);
}

// "fits", "rechunked", "pruned" or "off", with the memory configurations before and after.
nlohmann::json gate_json(const GateDecision& gate, const models::MemoryConfig& configured, bool checked) {
  const auto decision = !checked                                    ? "off"
                        : !gate.fits                                ? "pruned"
                        : models::to_json(gate.memory) == models::to_json(configured) ? "fits"
                                                                    : "rechunked";
  return {{"decision", decision}, {"configured", models::to_json(configured)}, {"chosen", models::to_json(gate.memory)}};
}

}  // namespace

StudyContext StudyContext::load(const hpo::StudySpec& spec, const std::atomic<int>* interrupted) {
  StudyContext context;
  context.spec = spec;
  context.settings = parse_study_settings(spec);
  context.fixed = study_trial_config(spec);
  check_batch_sizes(context.settings, context.fixed, spec);
  context.device = resolve_device(context.fixed.device, spec.source.string());
  context.profile = memory::device_profile(context.device);
  context.budget_mb = context.settings.memory.budget_for(context.profile.usable_bytes());
  context.weights_dir = weights_folder(spec);
  context.interrupted = interrupted;
  return context;
}

std::string interruption_reason(int signal) {
  return signal == SIGTERM ? "preempted (SIGTERM)" : "interrupted (Ctrl-C)";
}

hpo::FeasiblePredicate StudyContext::memory_feasibility() const {
  if (!settings.memory.gate || !budget_mb) return {};
  return [this](const hpo::Params& params) {
    try {
      const TrialConfig config = with_params(fixed, spec.search_space.to_external(params), "proposal");
      return memory_gate(config, budget_mb, profile, settings.memory.oom_retry.ladder).fits;
    } catch (const UserError&) {
      return false;  // an invalid combination (heads not dividing embed_dim): never propose it
    }
  };
}

namespace {

// What trials/trial_metrics.hpp names, for a trained and evaluated trial;
// the peaks from what the trial recorded (`attributes`).
TrialMetrics trial_metrics(const models::Diagnostics& diagnostics, double val_nll, double train_seconds,
                           const nlohmann::json& attributes) {
  TrialMetrics metrics{{"val_nll", val_nll}, {"train_seconds", train_seconds}};
  const double n = static_cast<double>(diagnostics.parameters.size());
  for (const auto& p : diagnostics.parameters) {
    metrics["calibration_error"] += p.calibration_error / n;
    metrics["recovery_r"] += p.correlation / n;
    metrics["nrmse"] += p.nrmse / n;
    metrics["contraction"] += p.contraction / n;
  }
  for (const char* peak : {"measured_peak_mb", "estimated_peak_mb"})
    if (attributes.contains(peak) && attributes[peak].is_number()) metrics[peak] = attributes[peak].get<double>();
  return metrics;
}

// The walk of one trial, a method a stage, in the order the README describes:
// announce -> configure -> gate_memory -> build_trainer (seed, threads,
// probe) -> train (fit with OOM backoff, pruner) -> evaluate -> save_weights.
// A stage that ends the trial returns its outcome (finish() has told the
// study); std::nullopt means the walk goes on.
class TrialStages {
 public:
  TrialStages(hpo::Study& study, const hpo::AskedTrial& asked, const StudyContext& context,
              const TrialObserver& observer)
      : study_(study), asked_(asked), context_(context), observer_(observer), record_(study, asked, outcome_),
        params_(context.spec.search_space.to_external(asked.params)), meter_(context.device) {
    outcome_.number = asked.number;
  }

  TrialOutcome run() {
    announce();
    if (auto ended = configure()) return *ended;
    if (auto ended = gate_memory()) return *ended;
    build_trainer();
    if (auto ended = train()) return *ended;
    const auto evaluated = evaluate();
    if (!evaluated) return finish(hpo::TrialState::Fail, {}, "non-finite objective value");
    const auto& [values, metrics] = *evaluated;
    save_weights();
    return finish(hpo::TrialState::Complete, values, "", constraint_values(context_.spec, metrics));
  }

 private:
  void announce() {
    if (!observer_.on_start) return;
    const auto best = report::ranked_best(context_.spec, study_.trials());
    observer_.on_start(asked_, params_,
                       best ? best->values[report::ranked_objective(context_.spec)] : std::optional<double>(),
                       study_.n_finished());
  }

  // The study's fixed configuration with this trial's params.
  std::optional<TrialOutcome> configure() {
    try {
      config_ = with_params(context_.fixed, params_,
                            context_.spec.source.string() + " (trial " + std::to_string(asked_.number) + " params)");
    } catch (const UserError& e) {
      return finish(hpo::TrialState::Fail, {}, std::string("invalid params: ") + e.what());
    }
    return std::nullopt;
  }

  // The estimate against the budget; PRUNED "memory" before anything is
  // allocated. Metered from here: a pruned trial shows that it allocated nothing.
  std::optional<TrialOutcome> gate_memory() {
    baseline_bytes_ = meter_.snapshot().current_bytes;
    meter_.reset_peak();
    const MemorySettings& memory = context_.settings.memory;
    const GateDecision gate =
        memory_gate(config_, memory.gate ? context_.budget_mb : std::nullopt, context_.profile, memory.oom_retry.ladder);
    record_.system("estimated_peak_mb", gate.estimate.peak_mb);
    record_.system("estimate", gate.estimate.to_json());
    if (!context_.profile.warnings.empty()) record_.system("estimate_warnings", context_.profile.warnings);
    record_.system("gate", gate_json(gate, config_.approximator.memory, memory.gate && context_.budget_mb));
    if (context_.budget_mb) record_.system("budget_mb", *context_.budget_mb);
    if (!gate.fits) {
      record_.system("measured_peak_mb", measured_peak_mb());
      return finish(hpo::TrialState::Pruned, {},
                    std::string(kPruneReasonMemory) + ": estimated peak " + format_mb(gate.estimate.peak_mb) +
                        " exceeds the budget of " + format_mb(*context_.budget_mb) +
                        " at every memory configuration (item and person chunks down to the ladder's smallest, with "
                        "checkpointing)");
    }
    config_.approximator.memory = gate.memory;
    if (context_.device.is_cpu() && context_.budget_mb)
      cpu_budget_.emplace(static_cast<int64_t>(*context_.budget_mb * memory::kBytesPerMb) + baseline_bytes_);
    return std::nullopt;
  }

  // The network from the trial's seed, with what `bfhpo train` needs to
  // reproduce this run (trials/reproduction.hpp); the probe when the study asks.
  void build_trainer() {
    config_.training.seed = trial_seed(config_.training.seed, asked_.number);
    const TrainingOptions& training = config_.training;
    record_.system("seed", training.seed);
    record_.system("threads", set_training_threads(training, context_.device));
    record_.system("libtorch", TORCH_VERSION);
    torch::manual_seed(training.seed);
    trainer_.emplace(starting_network(config_, context_.spec.source.string()), config_.simulator, training, context_.device);
    const MemorySettings& memory = context_.settings.memory;
    if (!memory.probe) return;
    ProbeOptions probe;
    probe.batch_size = training.batch_size;
    probe.ladder = memory.oom_retry.ladder;
    probe.seed = training.seed;
    // The probe's clone draws its initial weights from the global generator;
    // training goes on from the state a run without a probe has.
    auto generator = at::globalContext().defaultGenerator(torch::kCPU);
    const auto state = generator.get_state();
    record_.system("probe",
                   probe_memory_config(trainer_->approximator(), config_.simulator, probe, context_.device).to_json());
    generator.set_state(state);
  }

  // fit_with_oom_retry with the heartbeat, the pruner and the interruption
  // signal in its callbacks; ends the trial on an interruption, an OOM below
  // the smallest batch, divergence or the pruner.
  std::optional<TrialOutcome> train() {
    auto last_heartbeat = std::chrono::steady_clock::now();
    int last_epoch = 0;
    const StepCallback on_step = [&](const StepReport& step) {
      if (interrupted()) throw Interrupted{};
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_heartbeat).count() > kHeartbeatEvery_s) {
        study_.heartbeat(asked_.number);
        last_heartbeat = std::chrono::steady_clock::now();
      }
      if (observer_.on_step) observer_.on_step(step);
    };
    hpo::PruneDecision prune;
    const EpochCallback on_epoch = [&](const EpochReport& epoch) {
      last_epoch = epoch.epoch;
      // A study of several objectives takes no intermediate values (Optuna's Trial.report refuses them).
      if (!context_.spec.multi_objective()) study_.report(asked_.number, epoch.epoch, epoch.validation_loss);
      study_.heartbeat(asked_.number);
      last_heartbeat = std::chrono::steady_clock::now();
      if (observer_.on_epoch) observer_.on_epoch(epoch);
      if (!context_.spec.multi_objective()) prune = study_.should_prune(asked_.number);
      return !prune.prune && !interrupted();
    };

    const auto fit_start = std::chrono::steady_clock::now();
    try {
      fit_ = fit_with_oom_retry(*trainer_, context_.settings.memory.oom_retry, on_epoch, on_step, observer_.on_oom);
    } catch (const Interrupted&) {
      cpu_budget_.reset();
      outcome_.interrupted = true;
      return finish(hpo::TrialState::Fail, {},
                    interruption_reason(context_.interrupted->load()) + " in epoch " + std::to_string(last_epoch + 1));
    } catch (const OomBackoffExhausted& e) {
      cpu_budget_.reset();
      record_.system("measured_peak_mb", measured_peak_mb());
      record_.system("oom_attempts", static_cast<int>(e.history().size()));
      record_.system("oom_history", history_json(e.history()));
      return finish(hpo::TrialState::Fail, {}, std::string("oom: ") + e.what());
    }
    train_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - fit_start).count();
    record_fit();

    if (fit_.summary.reason == StopReason::diverged)
      return finish(hpo::TrialState::Fail, {}, "diverged: " + fit_.summary.detail);
    if (fit_.summary.reason == StopReason::stopped_by_callback) {
      if (prune.prune)
        return finish(hpo::TrialState::Pruned, {},
                      "pruner: stopped after epoch " + std::to_string(last_epoch) + " (" + prune.explanation + ")");
      outcome_.interrupted = true;
      return finish(hpo::TrialState::Fail, {},
                    interruption_reason(context_.interrupted->load()) + " after epoch " + std::to_string(last_epoch));
    }
    return std::nullopt;
  }

  // What training ended with: the measured peak and the configuration the ladder left.
  void record_fit() {
    record_.system("measured_peak_mb", measured_peak_mb());
    record_.system("device", context_.device.str());
    record_.system("batch_size", fit_.batch_size);
    record_.system("item_chunk_size", fit_.item_chunk_size ? nlohmann::json(*fit_.item_chunk_size) : nlohmann::json());
    record_.system("gradient_checkpointing", fit_.gradient_checkpointing);
    record_.system("person_chunk_size",
                   fit_.person_chunk_size ? nlohmann::json(*fit_.person_chunk_size) : nlohmann::json());
    record_.system("oom_attempts", static_cast<int>(fit_.history.size()));
    record_.system("oom_history", history_json(fit_.history));
    record_.system("step_seconds", fit_.summary.step_seconds);
    record_.system("validation_seconds", fit_.summary.validation_seconds);
    if (fit_.summary.epochs_completed > 0) record_.user("val_nll", fit_.summary.validation_loss);
  }

  // Posterior diagnostics on held-out simulations, and the objective values
  // (none when one is not finite) with the metrics they came from.
  std::optional<std::pair<std::vector<double>, TrialMetrics>> evaluate() {
    EvaluationOptions evaluation;
    evaluation.seed = context_.spec.seed;
    evaluation.batch_size = fit_.batch_size;
    const auto evaluation_start = std::chrono::steady_clock::now();
    posterior_ = evaluate_posterior(trainer_->approximator(), config_.simulator, evaluation, context_.device);
    const models::Diagnostics& diagnostics = posterior_.diagnostics;
    record_.system("diagnostics_seconds",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluation_start).count());
    cpu_budget_.reset();
    double calibration_error = 0.0;
    for (const auto& p : diagnostics.parameters)
      calibration_error += p.calibration_error / diagnostics.parameters.size();
    record_.user("calibration_error", calibration_error);
    record_.system("diagnostics", diagnostics.to_json());
    TrialMetrics metrics = trial_metrics(diagnostics, fit_.summary.validation_loss, train_seconds_, outcome_.attributes);
    auto values = objective_values(context_.spec, context_.settings, metrics);
    if (!values) return std::nullopt;
    return std::make_pair(std::move(*values), std::move(metrics));
  }

  // The weights under a name no other trial's file holds, the per-item
  // posterior summaries beside them. A full disk is not the params' fault:
  // the trial is FAIL, its params re-queued, and the run stops.
  void save_weights() {
    std::filesystem::path weights;
    try {
      weights = reserve_weights_file(context_.weights_dir, asked_.number);
      trainer_->save_weights(weights);
    } catch (const std::exception& e) {
      if (!weights.empty()) {
        std::error_code ignored;
        std::filesystem::remove(weights, ignored);  // the empty name reserved above, never another's file
      }
      outcome_.interrupted = true;
      finish(hpo::TrialState::Fail, {}, std::string("cannot save the weights: ") + e.what());
      throw UserError("trial " + std::to_string(asked_.number) + " is FAIL and its params re-queued: " + e.what() +
                      " (bfhpo optimize resumes the study where it stopped)");
    }
    record_.system("weights", weights.string());
    const auto items = std::filesystem::path(weights).replace_extension(".posterior.json");  // reserved with the weights
    write_file_atomically(items, posterior_.items.to_json().dump() + "\n");
    record_.system("posterior_items", items.string());
  }

  // Every path ends here: the time is recorded while the trial still takes
  // attributes, then the state is told (or the params re-queued after an interruption).
  TrialOutcome finish(hpo::TrialState state, const std::vector<double>& values, const std::string& reason,
                      const std::optional<std::vector<double>>& constraints = std::nullopt) {
    record_.system("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    report::TrialFacts facts = report::trial_facts(study_.trial(asked_.number));
    facts.reason = reason;
    const nlohmann::json dashboard = report::dashboard_user_attrs(facts);
    for (const auto& [key, attr] : dashboard.items()) record_.user(key, attr);
    outcome_.state = state;
    outcome_.values = values;
    outcome_.reason = reason;
    if (outcome_.interrupted) {
      study_.fail_and_requeue(asked_.number, reason);
    } else {
      try {
        study_.tell(asked_.number, state, values, reason, constraints);
      } catch (const hpo::TrialNotRunning&) {
        remove_saved_files(outcome_.attributes);
        throw;
      }
    }
    if (observer_.on_finish) observer_.on_finish(outcome_);
    return outcome_;
  }

  bool interrupted() const { return context_.interrupted && context_.interrupted->load(); }
  double measured_peak_mb() const {
    return static_cast<double>(meter_.snapshot().peak_bytes - baseline_bytes_) / memory::kBytesPerMb;
  }

  hpo::Study& study_;
  const hpo::AskedTrial& asked_;
  const StudyContext& context_;
  const TrialObserver& observer_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  TrialOutcome outcome_;
  TrialRecord record_;
  const nlohmann::json params_;
  TrialConfig config_;
  memory::MemoryMeter meter_;
  int64_t baseline_bytes_ = 0;
  std::optional<memory::CpuMemoryBudget> cpu_budget_;
  std::optional<Trainer> trainer_;
  FitResult fit_;
  double train_seconds_ = 0.0;
  PosteriorEvaluation posterior_;
};

// Another writer (an Optuna worker, `bfhpo tell`) finished the trial while it
// trained here: its record stands and this worker's result is dropped.
TrialOutcome finished_elsewhere(hpo::Study& study, const hpo::AskedTrial& asked, const TrialObserver& observer) {
  const hpo::FrozenTrial& recorded = study.trial(asked.number);
  TrialOutcome outcome;
  outcome.number = asked.number;
  outcome.state = recorded.state;
  outcome.values = recorded.values;
  outcome.reason = "finished by another writer";
  if (observer.on_finish) observer.on_finish(outcome);
  std::cerr << "bfhpo: warning: trial " << asked.number << " was finished by another writer ("
            << hpo::to_string(recorded.state) << ") while this worker trained it; this worker's result for it is dropped\n";
  return outcome;
}

}  // namespace

TrialOutcome run_trial(hpo::Study& study, const hpo::AskedTrial& asked, const StudyContext& context,
                       const TrialObserver& observer) {
  try {
    return TrialStages(study, asked, context, observer).run();
  } catch (const hpo::TrialNotRunning&) {
    return finished_elsewhere(study, asked, observer);
  } catch (const std::exception& error) {
    // A bug: record it on the trial so the journal says what happened, then crash loudly.
    if (study.trial(asked.number).state == hpo::TrialState::Running)
      study.tell(asked.number, hpo::TrialState::Fail, std::vector<double>{}, std::string("error: ") + error.what());
    throw;
  }
}

}  // namespace bfhpo::trials
