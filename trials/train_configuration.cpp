#include "trials/train_configuration.hpp"

#include "trials/starting_network.hpp"

#include "common/atomic_file.hpp"
#include "common/config_reader.hpp"
#include "hpo/study_spec.hpp"
#include "memory/meter.hpp"
#include "trials/device.hpp"
#include "trials/evaluation.hpp"
#include "trials/training_threads.hpp"

#include <chrono>
#include <cstdlib>

namespace bfhpo::trials {
namespace {

void write_json(const std::filesystem::path& file, const nlohmann::json& value) {
  write_file_atomically(file, value.dump(2) + "\n");
}

}  // namespace

nlohmann::json TrainOutcome::to_json() const {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : summary.history)
    epochs.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"validation_loss", e.validation_loss},
                      {"seconds", e.seconds}});
  nlohmann::json reproduction;
  if (retrains) {
    const auto& expected = retrains->validation_loss;
    reproduction = {{"trial", retrains->trial},
                    {"trial_validation_loss", expected ? nlohmann::json(*expected) : nlohmann::json()},
                    {"difference", expected ? nlohmann::json(summary.validation_loss - *expected) : nlohmann::json()},
                    {"exact", reproduction_obstacles.empty()},
                    {"obstacles", reproduction_obstacles}};
  }
  return {{"config", config.to_json()},
          {"device", device},
          {"threads", threads},
          {"measured_peak_mb", measured_peak_mb},
          {"reproduction", reproduction},
          {"stop_reason", trials::to_string(summary.reason)},
          {"stop_detail", summary.detail},
          {"epochs_completed", summary.epochs_completed},
          {"validation_loss", summary.validation_loss},
          {"history", epochs},
          {"diagnostics", diagnostics.to_json()},
          {"seconds", seconds},
          {"weights", (out_dir / "weights.pt").string()}};
}

TrainOutcome train_configuration(const TrainRequest& request, const EpochCallback& on_epoch,
                                 const StepCallback& on_step) {
  const auto start = std::chrono::steady_clock::now();
  const hpo::StudySpec study = hpo::load_study_spec(request.study_file);
  const nlohmann::json params =
      request.params_file.empty() ? nlohmann::json::object() : read_params_file(request.params_file);
  TrainOutcome outcome;
  outcome.config = make_trial_config(study, params, request.params_file.string());
  const int study_epochs = outcome.config.training.epochs;
  // An export of a trial (`export --best`): train with the seed, memory configuration and
  // batch size that trial settled on (gate, probe or OOM ladder), as its "config" says.
  if (!request.params_file.empty()) {
    const nlohmann::json document = read_config_file(request.params_file, "params file");
    if (document.is_object() && document.contains("config")) {
      const TrialConfig trained = parse_trial_config(document["config"], request.params_file.string());
      outcome.config.approximator.memory = trained.approximator.memory;
      outcome.config.training.batch_size = trained.training.batch_size;
      outcome.config.training.seed = trained.training.seed;
    }
    if (document.is_object() && document.contains("trained_with"))
      outcome.retrains = TrainedWith::from_json(document["trained_with"], request.params_file.string());
  }
  if (request.epochs) {
    if (*request.epochs < 1) throw UserError("bfhpo train: --epochs must be >= 1. Fix: give --epochs 1 or more");
    outcome.config.training.epochs = *request.epochs;
    if (const auto problem = outcome.config.training.problem())
      throw UserError("bfhpo train: --epochs " + std::to_string(*request.epochs) + " with training.num_batches of " +
                      request.study_file.string() + ": " + problem->problem + ". Fix: give fewer --epochs");
  }
  if (request.seed) outcome.config.training.seed = *request.seed;
  outcome.out_dir = request.out_dir.empty() ? std::filesystem::path(request.study_file.string() + ".train")
                                            : request.out_dir;
  create_output_folder(outcome.out_dir);
  const torch::Device device = resolve_device(outcome.config.device, request.study_file.string());
  outcome.device = device.str();
  // One network to train: unless the study or OMP_NUM_THREADS says otherwise, on every CPU the process is given
  // (a retrained trial: on the threads it recorded, so that it reproduces).
  if (outcome.config.training.threads == 0 && std::getenv("OMP_NUM_THREADS") == nullptr) {
    if (outcome.retrains && outcome.retrains->threads) {
      outcome.config.training.threads = *outcome.retrains->threads;
    } else if (device.is_cpu()) {
      outcome.config.training.threads = available_cpus();
    }
  }
  write_json(outcome.out_dir / "config.json", outcome.config.to_json());

  // Metered as a trial is: on the CPU this installs the tracking allocator, whose cache of freed large
  // blocks spares each step the page faults of fresh memory (memory/cpu_memory_tracking.hpp).
  memory::MemoryMeter meter(device);
  const int64_t baseline = meter.snapshot().current_bytes;
  meter.reset_peak();
  outcome.threads = set_training_threads(outcome.config.training, device);
  if (outcome.retrains) {
    outcome.reproduction_obstacles =
        reproduction_obstacles(*outcome.retrains, outcome.config.training.seed, outcome.device, outcome.threads);
    if (request.epochs && *request.epochs != study_epochs)
      outcome.reproduction_obstacles.push_back("--epochs " + std::to_string(*request.epochs) + ", the trial trained " +
                                               std::to_string(study_epochs) + " epochs");
  }
  torch::manual_seed(outcome.config.training.seed);
  Trainer trainer(starting_network(outcome.config, request.study_file.string()), outcome.config.simulator,
                  outcome.config.training, device);
  outcome.summary = trainer.fit(on_epoch, on_step);
  outcome.measured_peak_mb = static_cast<double>(meter.snapshot().peak_bytes - baseline) / (1024.0 * 1024.0);
  trainer.save_weights(outcome.out_dir / "weights.pt");
  EvaluationOptions evaluation;
  evaluation.seed = study.seed;
  evaluation.batch_size = outcome.config.training.batch_size;
  outcome.diagnostics = evaluate_posterior(trainer.approximator(), outcome.config.simulator, evaluation, device).diagnostics;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_json(outcome.out_dir / "result.json", outcome.to_json());
  return outcome;
}

}  // namespace bfhpo::trials
