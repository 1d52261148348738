// Online training of an approximator, as BayesFlow's fit: `epochs` x
// `num_batches` steps, a freshly simulated batch each step (batch index =
// global step, so a run is reproducible), Adam with linear warm-up and cosine
// decay, gradient-norm clipping, and a fixed seeded validation set whose loss
// is reported after every epoch (a pruner can stop the run from the callback).
//
// On the CPU with two or more training threads (trials/training_threads.hpp),
// a step whose loss splits by data set runs in parts of its batch on as many
// threads (trials/split_step.hpp), and the validation set's batches run side
// by side.
//
// A step is all-or-nothing for the training position: train_step() advances
// the step counter only when the step finished, so after an exception (an
// OOM) the weights, the buffers (running standardization, actnorm flags), the
// optimizer state and the position are those of the last completed step and
// fit() continues from there. (A failed very first step may leave actnorm's
// data-initialised parameters behind; its flag is restored, so the retry
// initialises them again.) This is what lets
// fit_with_oom_retry change the batch size or the item chunk and go on
// without losing progress.
#pragma once

#include "common/config_reader.hpp"
#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/training_options.hpp"

#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct EpochReport {
  int epoch = 0;                   // 1-based
  int epochs = 0;
  double train_loss = 0.0;         // mean loss of the epoch's steps
  double validation_loss = 0.0;    // NLL per item on the validation set, original space (eval mode)
  double seconds = 0.0;            // wall time of the epoch's steps and validation
};

// Called after every epoch; returning false stops the run (a pruner).
using EpochCallback = std::function<bool(const EpochReport&)>;
struct StepReport {
  int epoch = 0;                   // 1-based
  int epochs = 0;
  int step = 0;                    // 1-based, within the epoch
  int num_batches = 0;
  double loss = 0.0;
};

// Called after every step (a progress display).
using StepCallback = std::function<void(const StepReport&)>;

// diverged: a non-finite training or validation loss, or |loss| > 1e4.
enum class StopReason { completed, stopped_by_callback, diverged };
std::string to_string(StopReason reason);

struct TrainingSummary {
  StopReason reason = StopReason::completed;
  std::string detail;              // why it stopped; for a diverged run: the loss, where, and the fix
  int epochs_completed = 0;
  int steps_completed = 0;
  double validation_loss = 0.0;    // of the last completed epoch
  std::vector<EpochReport> history;
  double step_seconds = 0.0;       // wall time inside training steps, failed ones included
  double validation_seconds = 0.0; // wall time of the validation passes
};

class Trainer {
 public:
  Trainer(std::shared_ptr<models::ContinuousApproximatorImpl> approximator, const models::SimulatorSpec& simulator,
          TrainingOptions options, torch::Device device);

  // Runs every remaining step of every remaining epoch (continuing after an
  // exception from where the last completed step left off).
  TrainingSummary fit(const EpochCallback& on_epoch = {}, const StepCallback& on_step = {});
  // One optimisation step on the next batch; returns its loss.
  double train_step();
  // The same step on a given batch instead of the next simulated one (a
  // benchmark feeding both bfhpo and a Python peer the same data).
  double train_step(const models::SimulatedBatch& batch);
  // NLL per item over the validation set in the original parameter space
  // (comparable across trials and with the prior's), in eval mode without gradients.
  double validation_loss();

  void set_batch_size(int64_t batch_size);
  int64_t batch_size() const { return options_.batch_size; }
  int steps_completed() const { return steps_completed_; }
  int64_t total_steps() const { return options_.total_steps(); }
  double learning_rate_at(int step) const;
  const TrainingOptions& options() const { return options_; }
  const models::SimulatorSpec& simulator_spec() const { return simulator_.spec(); }
  models::ContinuousApproximatorImpl& approximator() { return *approximator_; }
  torch::optim::Adam& optimizer() { return optimizer_; }

  // Atomically (common/atomic_file.hpp): a full disk leaves no partial file
  // and is a UserError naming the file and the reason. Beside the LibTorch
  // archive `path` goes the TorchScript module that Python's torch loads
  // (models/torchscript_module.hpp), at torchscript_path(path).
  void save_weights(const std::filesystem::path& path) const;
  // weights.pt -> weights.torchscript.pt
  static std::filesystem::path torchscript_path(const std::filesystem::path& weights);
  void load_weights(const std::filesystem::path& path);

 private:
  // The parts of a step on `batch_size` data sets (trials/split_step.hpp): 1 when it runs whole.
  int64_t step_parts(int64_t batch_size) const;

  std::shared_ptr<models::ContinuousApproximatorImpl> approximator_;
  models::Simulator simulator_;
  models::Simulator validation_simulator_;
  TrainingOptions options_;
  torch::Device device_;
  torch::optim::Adam optimizer_;
  int steps_completed_ = 0;
  double epoch_loss_sum_ = 0.0;  // of the current epoch's completed steps
  std::chrono::steady_clock::time_point epoch_start_ = std::chrono::steady_clock::now();
  TrainingSummary summary_;
};

}  // namespace bfhpo::trials
