#include "trials/trainer.hpp"

#include "common/atomic_file.hpp"
#include "models/torchscript_module.hpp"
#include "trials/split_step.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace bfhpo::trials {
namespace {

constexpr uint64_t kValidationSeedOffset = 0x5EEDF00DULL;
constexpr double kPi = 3.14159265358979323846;
// A per-item NLL this large (either sign) means the run has diverged: a
// posterior density over two standardized parameters never gets there.
constexpr double kDivergedLoss = 1e4;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string to_string(StopReason reason) {
  switch (reason) {
    case StopReason::completed: return "completed";
    case StopReason::stopped_by_callback: return "stopped";
    case StopReason::diverged: return "diverged";
  }
  throw std::logic_error("unknown stop reason");
}

Trainer::Trainer(std::shared_ptr<models::ContinuousApproximatorImpl> approximator,
                 const models::SimulatorSpec& simulator, TrainingOptions options, torch::Device device)
    : approximator_(std::move(approximator)),
      simulator_(simulator, options.seed, device),
      validation_simulator_(simulator, options.seed + kValidationSeedOffset, device),
      options_(options),
      device_(device),
      optimizer_(approximator_->parameters(), torch::optim::AdamOptions(options.learning_rate)) {
  if (approximator_->spec().param_dim != simulator_.param_dim() ||
      approximator_->spec().n_categories != simulator_.n_categories())
    throw std::invalid_argument("Trainer: the approximator's param_dim and n_categories must be the model's");
  if (options_.epochs < 1 || options_.num_batches < 1 || options_.batch_size < 1 || options_.validation_sims < 1)
    throw std::invalid_argument("Trainer: epochs, num_batches, batch_size and validation_sims must be >= 1");
  if (options_.total_steps() > TrainingOptions::kMaxSteps)
    throw std::invalid_argument("Trainer: epochs x num_batches exceeds TrainingOptions::kMaxSteps");
  approximator_->to(device_);
}

double Trainer::learning_rate_at(int step) const {
  const int64_t total = total_steps();
  const auto warmup = static_cast<int64_t>(std::ceil(options_.warmup_fraction * static_cast<double>(total)));
  if (step < warmup) return options_.learning_rate * (step + 1) / warmup;
  const double progress = total > warmup ? static_cast<double>(step - warmup) / (total - warmup) : 1.0;
  return options_.learning_rate * 0.5 * (1.0 + std::cos(kPi * progress));
}

void Trainer::set_batch_size(int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("Trainer: batch size must be >= 1");
  options_.batch_size = batch_size;
}

int64_t Trainer::step_parts(int64_t batch_size) const {
  return trials::step_parts(*approximator_, batch_size, training_threads(options_, device_), device_);
}

double Trainer::train_step() {
  return train_step(simulator_.sample(options_.batch_size, static_cast<uint64_t>(steps_completed_)));
}

double Trainer::train_step(const models::SimulatedBatch& batch) {
  const int64_t parts = step_parts(batch.responses.size(0));
  approximator_->train();
  for (auto& group : optimizer_.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(learning_rate_at(steps_completed_));
  // A forward in training mode updates buffers (the running standardization,
  // a fresh actnorm's flag); a step that throws puts them back.
  std::vector<torch::Tensor> buffers_before;
  for (const auto& buffer : approximator_->buffers()) buffers_before.push_back(buffer.clone());
  double loss_value = 0.0;
  try {
    optimizer_.zero_grad();
    if (parts > 1) {
      loss_value = split_loss_backward(*approximator_, batch, parts);
      if (!std::isfinite(loss_value)) return loss_value;  // the caller stops; no weight was updated
    } else {
      const auto terms = approximator_->loss(batch.responses, batch.item_params, batch.mask);
      loss_value = terms.total.item<double>();
      if (!std::isfinite(loss_value)) return loss_value;
      terms.total.backward();
    }
  } catch (...) {
    torch::NoGradGuard no_grad;
    auto buffers = approximator_->buffers();
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(buffers_before[i]);
    throw;
  }
  if (options_.clip_grad_norm > 0) torch::nn::utils::clip_grad_norm_(approximator_->parameters(), options_.clip_grad_norm);
  optimizer_.step();
  optimizer_.zero_grad();
  ++steps_completed_;
  return loss_value;
}

double Trainer::validation_loss() {
  torch::NoGradGuard no_grad;
  const int64_t parts = step_parts(options_.batch_size);
  approximator_->eval();
  // Batches of the training's size, each a function of its index; their sums added in order, so the loss is the
  // same whether they ran one after another or side by side.
  const int64_t batches = (options_.validation_sims + options_.batch_size - 1) / options_.batch_size;
  std::vector<double> nll_sums(static_cast<size_t>(batches));
  std::vector<int64_t> items(static_cast<size_t>(batches));
  const auto run_batch = [&](int64_t index) {
    const int64_t n = std::min(options_.batch_size, options_.validation_sims - index * options_.batch_size);
    const auto batch = validation_simulator_.sample(n, static_cast<uint64_t>(index));
    nll_sums[static_cast<size_t>(index)] =
        -approximator_->log_prob(batch.item_params, batch.responses, batch.mask).sum().item<double>();
    items[static_cast<size_t>(index)] = batch.item_params.size(0) * batch.item_params.size(1);
  };
  if (parts > 1) {
    for_each_on_workers(batches, run_batch, parts);
  } else {
    for (int64_t index = 0; index < batches; ++index) run_batch(index);
  }
  approximator_->train();
  double nll_sum = 0.0;
  int64_t item_count = 0;
  for (int64_t index = 0; index < batches; ++index) {
    nll_sum += nll_sums[static_cast<size_t>(index)];
    item_count += items[static_cast<size_t>(index)];
  }
  return nll_sum / static_cast<double>(item_count);
}

TrainingSummary Trainer::fit(const EpochCallback& on_epoch, const StepCallback& on_step) {
  while (true) {
    // An epoch whose steps are done but whose validation did not finish (an
    // OOM there) is reported before training goes on.
    const int epochs_done = steps_completed_ / options_.num_batches;
    if (epochs_done > summary_.epochs_completed) {
      EpochReport report;
      report.epoch = epochs_done;
      report.epochs = options_.epochs;
      report.train_loss = epoch_loss_sum_ / options_.num_batches;
      const auto validation_start = std::chrono::steady_clock::now();
      report.validation_loss = validation_loss();
      summary_.validation_seconds += seconds_since(validation_start);
      report.seconds = seconds_since(epoch_start_);
      epoch_loss_sum_ = 0.0;
      epoch_start_ = std::chrono::steady_clock::now();
      summary_.history.push_back(report);
      summary_.epochs_completed = epochs_done;
      summary_.validation_loss = report.validation_loss;
      if (!std::isfinite(report.validation_loss)) {
        summary_.reason = StopReason::diverged;
        summary_.detail = "validation loss " + std::to_string(report.validation_loss) + " after epoch " +
                          std::to_string(epochs_done) + "; lower training.learning_rate";
        return summary_;
      }
      if (on_epoch && !on_epoch(report)) {
        summary_.reason = StopReason::stopped_by_callback;
        summary_.detail = "stopped after epoch " + std::to_string(epochs_done);
        return summary_;
      }
    }
    if (steps_completed_ >= total_steps()) break;

    const int epoch = epochs_done + 1;
    const int step_in_epoch = steps_completed_ % options_.num_batches + 1;
    struct StepClock {  // counts a step's time even when it throws (an OOM)
      TrainingSummary& summary;
      std::chrono::steady_clock::time_point start;
      ~StepClock() { summary.step_seconds += seconds_since(start); }
    };
    double loss = 0.0;
    {
      StepClock clock{summary_, std::chrono::steady_clock::now()};
      loss = train_step();
    }
    if (!std::isfinite(loss) || std::abs(loss) > kDivergedLoss) {
      summary_.reason = StopReason::diverged;
      summary_.detail = "loss " + std::to_string(loss) + " at epoch " + std::to_string(epoch) + ", step " +
                        std::to_string(step_in_epoch) + "; lower training.learning_rate or clip harder";
      return summary_;
    }
    summary_.steps_completed = steps_completed_;
    epoch_loss_sum_ += loss;
    if (on_step) on_step({epoch, options_.epochs, step_in_epoch, options_.num_batches, loss});
  }
  summary_.reason = StopReason::completed;
  return summary_;
}

void Trainer::save_weights(const std::filesystem::path& path) const {
  // Serialized in memory first: LibTorch's file writer terminates the process
  // when a write fails (its destructor throws), so the file is written here.
  torch::serialize::OutputArchive archive;
  approximator_->save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_file_atomically(path, bytes.str());
  std::ostringstream module;
  models::save_torchscript(*approximator_, simulator_.parameter_names(), module);
  write_file_atomically(torchscript_path(path), module.str());
}

std::filesystem::path Trainer::torchscript_path(const std::filesystem::path& weights) {
  return std::filesystem::path(weights).replace_extension(".torchscript.pt");
}

void Trainer::load_weights(const std::filesystem::path& path) {
  torch::serialize::InputArchive archive;
  archive.load_from(path.string(), device_);
  approximator_->load(archive);
}

}  // namespace bfhpo::trials
