#include "trials/training_options.hpp"

#include "common/number_format.hpp"

#include <string>

namespace bfhpo::trials {

std::optional<ConfigProblem> TrainingOptions::problem() const {
  if (!(learning_rate > 0)) return ConfigProblem{"learning_rate", "must be positive", "give e.g. 5e-4"};
  if (!(warmup_fraction >= 0 && warmup_fraction < 1))
    return ConfigProblem{"warmup_fraction", "must be in [0, 1)", "give e.g. 0.05"};
  if (!(clip_grad_norm >= 0))
    return ConfigProblem{"clip_grad_norm", "must be >= 0, got " + format_exact(clip_grad_norm),
                         "give a norm such as 1.0, or 0 to turn clipping off"};
  if (threads < 0)
    return ConfigProblem{"threads", "must be >= 1, got " + std::to_string(threads),
                         "give the cores to train with, or leave it out to use every core the process is given"};
  if (total_steps() > kMaxSteps)
    return ConfigProblem{"epochs", std::to_string(epochs) + " epochs x " + std::to_string(num_batches) +
                                       " num_batches = " + std::to_string(total_steps()) + " steps exceeds " +
                                       std::to_string(kMaxSteps) + " steps, the most one run takes",
                         "give fewer epochs or num_batches"};
  return std::nullopt;
}

}  // namespace bfhpo::trials
