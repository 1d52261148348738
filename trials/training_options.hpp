// The optimisation settings of one training run (the study's "training"
// section and the trial's "training.*" params). LibTorch-free.
#pragma once

#include "common/config_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace bfhpo::trials {

struct TrainingOptions {
  // The most steps (epochs x num_batches) one run takes: steps are counted
  // in int (the trainer, the step-seeded simulator).
  static constexpr int64_t kMaxSteps = 2147483647;

  int epochs = 10;
  int num_batches = 50;            // steps per epoch
  int64_t batch_size = 32;         // simulated datasets per step
  double learning_rate = 5e-4;     // peak, after warm-up
  double warmup_fraction = 0.05;   // share of all steps with a linear ramp from 0
  double clip_grad_norm = 1.0;     // global gradient-norm clip; 0 turns it off
  int64_t validation_sims = 32;    // datasets in the fixed validation set
  uint64_t seed = 1;               // simulation and initialisation seed
  int threads = 0;                 // intra-op threads; 0: the cores given (trials/training_threads.hpp)
  // Fine-tuning: the weights.pt (absolute) of an estimator with this same
  // network, which training starts from instead of a random initialisation;
  // empty: a fresh network. Not searchable.
  std::string initial_weights;

  // learning_rate > 0, warmup_fraction in [0, 1), clip_grad_norm >= 0,
  // threads >= 0, at most kMaxSteps steps in all; field relative to
  // "training". Checked once every field is read (the steps take two).
  std::optional<ConfigProblem> problem() const;
  int64_t total_steps() const { return static_cast<int64_t>(epochs) * num_batches; }
};

}  // namespace bfhpo::trials
