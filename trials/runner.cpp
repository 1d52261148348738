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

TrialOutcome run_stages(hpo::Study& study, const hpo::AskedTrial& asked, const StudyContext& context,
                        const TrialObserver& observer) {
  const auto start = std::chrono::steady_clock::now();
  TrialOutcome outcome;
  outcome.number = asked.number;
  TrialRecord record(study, asked, outcome);
  const nlohmann::json params = context.spec.search_space.to_external(asked.params);
  if (observer.on_start) {
    const auto best = report::ranked_best(context.spec, study.trials());
    observer.on_start(asked, params, best ? best->values[report::ranked_objective(context.spec)] : std::optional<double>(),
                      study.n_finished());
  }
  // Every path ends here: the time is recorded while the trial still takes attributes.
  const auto finish = [&](hpo::TrialState state, const std::vector<double>& values, const std::string& reason,
                          const std::optional<std::vector<double>>& constraints = std::nullopt) {
    record.system("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    report::TrialFacts facts = report::trial_facts(study.trial(asked.number));
    facts.reason = reason;
    const nlohmann::json dashboard = report::dashboard_user_attrs(facts);
    for (const auto& [key, attr] : dashboard.items()) record.user(key, attr);
    outcome.state = state;
    outcome.values = values;
    outcome.reason = reason;
    if (outcome.interrupted) {
      study.fail_and_requeue(asked.number, reason);
    } else {
      try {
        study.tell(asked.number, state, values, reason, constraints);
      } catch (const hpo::TrialNotRunning&) {
        remove_saved_files(outcome.attributes);
        throw;
      }
    }
    if (observer.on_finish) observer.on_finish(outcome);
    return outcome;
  };

  TrialConfig config;
  try {
    config = with_params(context.fixed, params,
                         context.spec.source.string() + " (trial " + std::to_string(asked.number) + " params)");
  } catch (const UserError& e) {
    return finish(hpo::TrialState::Fail, {}, std::string("invalid params: ") + e.what());
  }
  // Metered from here: a trial pruned by the gate shows that it allocated nothing.
  memory::MemoryMeter meter(context.device);
  const int64_t baseline = meter.snapshot().current_bytes;
  meter.reset_peak();
  const auto measured_peak_mb = [&] { return static_cast<double>(meter.snapshot().peak_bytes - baseline) / memory::kBytesPerMb; };
  const MemorySettings& memory_settings = context.settings.memory;
  const GateDecision gate = memory_gate(config, memory_settings.gate ? context.budget_mb : std::nullopt,
                                        context.profile, memory_settings.oom_retry.ladder);
  record.system("estimated_peak_mb", gate.estimate.peak_mb);
  record.system("estimate", gate.estimate.to_json());
  if (!context.profile.warnings.empty()) record.system("estimate_warnings", context.profile.warnings);
  record.system("gate", gate_json(gate, config.approximator.memory, memory_settings.gate && context.budget_mb));
  if (context.budget_mb) record.system("budget_mb", *context.budget_mb);
  if (!gate.fits) {
    record.system("measured_peak_mb", measured_peak_mb());
    return finish(hpo::TrialState::Pruned, {},
                  std::string(kPruneReasonMemory) + ": estimated peak " + format_mb(gate.estimate.peak_mb) +
                      " exceeds the budget of " + format_mb(*context.budget_mb) +
                      " at every memory configuration (item and person chunks down to the ladder's smallest, with "
                      "checkpointing)");
  }
  config.approximator.memory = gate.memory;

  std::optional<memory::CpuMemoryBudget> cpu_budget;
  if (context.device.is_cpu() && context.budget_mb)
    cpu_budget.emplace(static_cast<int64_t>(*context.budget_mb * memory::kBytesPerMb) + baseline);

  // What `bfhpo train` needs to reproduce this run (trials/reproduction.hpp).
  config.training.seed = trial_seed(config.training.seed, asked.number);
  const TrainingOptions& training = config.training;
  record.system("seed", training.seed);
  record.system("threads", set_training_threads(training, context.device));
  record.system("libtorch", TORCH_VERSION);
  torch::manual_seed(training.seed);
  Trainer trainer(models::make_approximator(config.approximator, training.seed), config.simulator, training,
                  context.device);
  if (memory_settings.probe) {
    ProbeOptions probe;
    probe.batch_size = training.batch_size;
    probe.ladder = memory_settings.oom_retry.ladder;
    probe.seed = training.seed;
    // The probe's clone draws its initial weights from the global generator;
    // training goes on from the state a run without a probe has.
    auto generator = at::globalContext().defaultGenerator(torch::kCPU);
    const auto state = generator.get_state();
    record.system("probe", probe_memory_config(trainer.approximator(), config.simulator, probe, context.device).to_json());
    generator.set_state(state);
  }

  auto last_heartbeat = std::chrono::steady_clock::now();
  int last_epoch = 0;
  const StepCallback on_step = [&](const StepReport& step) {
    if (context.interrupted && context.interrupted->load()) throw Interrupted{};
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_heartbeat).count() > kHeartbeatEvery_s) {
      study.heartbeat(asked.number);
      last_heartbeat = std::chrono::steady_clock::now();
    }
    if (observer.on_step) observer.on_step(step);
  };
  hpo::PruneDecision prune;
  const EpochCallback on_epoch = [&](const EpochReport& epoch) {
    last_epoch = epoch.epoch;
    // A study of several objectives takes no intermediate values (Optuna's Trial.report refuses them).
    if (!context.spec.multi_objective()) study.report(asked.number, epoch.epoch, epoch.validation_loss);
    study.heartbeat(asked.number);
    last_heartbeat = std::chrono::steady_clock::now();
    if (observer.on_epoch) observer.on_epoch(epoch);
    if (!context.spec.multi_objective()) prune = study.should_prune(asked.number);
    return !prune.prune && !(context.interrupted && context.interrupted->load());
  };

  FitResult fit;
  const auto fit_start = std::chrono::steady_clock::now();
  try {
    fit = fit_with_oom_retry(trainer, memory_settings.oom_retry, on_epoch, on_step, observer.on_oom);
  } catch (const Interrupted&) {
    cpu_budget.reset();
    outcome.interrupted = true;
    return finish(hpo::TrialState::Fail, {},
                  interruption_reason(context.interrupted->load()) + " in epoch " + std::to_string(last_epoch + 1));
  } catch (const OomBackoffExhausted& e) {
    cpu_budget.reset();
    record.system("measured_peak_mb", measured_peak_mb());
    record.system("oom_attempts", static_cast<int>(e.history().size()));
    record.system("oom_history", history_json(e.history()));
    return finish(hpo::TrialState::Fail, {}, std::string("oom: ") + e.what());
  }
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - fit_start).count();
  record.system("measured_peak_mb", measured_peak_mb());
  record.system("device", context.device.str());
  record.system("batch_size", fit.batch_size);
  record.system("item_chunk_size", fit.item_chunk_size ? nlohmann::json(*fit.item_chunk_size) : nlohmann::json());
  record.system("gradient_checkpointing", fit.gradient_checkpointing);
  record.system("person_chunk_size",
                fit.person_chunk_size ? nlohmann::json(*fit.person_chunk_size) : nlohmann::json());
  record.system("oom_attempts", static_cast<int>(fit.history.size()));
  record.system("oom_history", history_json(fit.history));
  record.system("step_seconds", fit.summary.step_seconds);
  record.system("validation_seconds", fit.summary.validation_seconds);
  if (fit.summary.epochs_completed > 0) record.user("val_nll", fit.summary.validation_loss);

  if (fit.summary.reason == StopReason::diverged) {
    return finish(hpo::TrialState::Fail, {}, "diverged: " + fit.summary.detail);
  }
  if (fit.summary.reason == StopReason::stopped_by_callback) {
    if (prune.prune)
      return finish(hpo::TrialState::Pruned, {},
                    "pruner: stopped after epoch " + std::to_string(last_epoch) + " (" + prune.explanation + ")");
    outcome.interrupted = true;
    return finish(hpo::TrialState::Fail, {},
                  interruption_reason(context.interrupted->load()) + " after epoch " + std::to_string(last_epoch));
  }

  EvaluationOptions evaluation;
  evaluation.seed = context.spec.seed;
  evaluation.batch_size = fit.batch_size;
  const auto evaluation_start = std::chrono::steady_clock::now();
  const PosteriorEvaluation posterior =
      evaluate_posterior(trainer.approximator(), config.simulator, evaluation, context.device);
  const models::Diagnostics& diagnostics = posterior.diagnostics;
  record.system("diagnostics_seconds",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluation_start).count());
  cpu_budget.reset();
  double calibration_error = 0.0;
  for (const auto& p : diagnostics.parameters) calibration_error += p.calibration_error / diagnostics.parameters.size();
  record.user("calibration_error", calibration_error);
  record.system("diagnostics", diagnostics.to_json());
  const TrialMetrics metrics =
      trial_metrics(diagnostics, fit.summary.validation_loss, train_seconds, outcome.attributes);
  const std::optional<std::vector<double>> values = objective_values(context.spec, context.settings, metrics);
  if (!values) return finish(hpo::TrialState::Fail, {}, "non-finite objective value");
  std::filesystem::path weights;
  try {
    weights = reserve_weights_file(context.weights_dir, asked.number);
    trainer.save_weights(weights);
  } catch (const std::exception& e) {  // a full disk: not the params' fault, so they are re-queued
    if (!weights.empty()) {
      std::error_code ignored;
      std::filesystem::remove(weights, ignored);  // the empty name reserved above, never another's file
    }
    outcome.interrupted = true;
    finish(hpo::TrialState::Fail, {}, std::string("cannot save the weights: ") + e.what());
    throw UserError("trial " + std::to_string(asked.number) + " is FAIL and its params re-queued: " + e.what() +
                    " (bfhpo optimize resumes the study where it stopped)");
  }
  record.system("weights", weights.string());
  const auto items = std::filesystem::path(weights).replace_extension(".posterior.json");  // the name reserved for this trial
  write_file_atomically(items, posterior.items.to_json().dump() + "\n");
  record.system("posterior_items", items.string());
  return finish(hpo::TrialState::Complete, *values, "", constraint_values(context.spec, metrics));
}

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
    return run_stages(study, asked, context, observer);
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
