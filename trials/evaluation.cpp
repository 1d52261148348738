#include "trials/evaluation.hpp"

#include "memory/oom.hpp"

#include <algorithm>

namespace bfhpo::trials {
namespace {

constexpr uint64_t kEvaluationSeedOffset = 0xE7A1ULL << 20;

// Draws [N, S, D] and truths [N, D] over every item of the evaluation datasets.
std::pair<torch::Tensor, torch::Tensor> posterior_draws(models::ContinuousApproximatorImpl& approximator,
                                                        const models::Simulator& simulator,
                                                        const EvaluationOptions& options, int64_t batch_size) {
  std::vector<torch::Tensor> draws, truths;
  for (int64_t done = 0, index = 0; done < options.n_datasets; ++index) {
    const int64_t n = std::min(batch_size, options.n_datasets - done);
    const auto batch = simulator.sample(n, static_cast<uint64_t>(index));
    const int64_t d = batch.item_params.size(-1);
    std::vector<torch::Tensor> chunks;
    for (int64_t drawn = 0; drawn < options.n_draws; drawn += options.draw_chunk) {
      const int64_t k = std::min(options.draw_chunk, options.n_draws - drawn);
      chunks.push_back(approximator.sample(k, batch.responses, batch.mask).first.reshape({-1, k, d}));
    }
    draws.push_back(torch::cat(chunks, 1));
    truths.push_back(batch.item_params.reshape({-1, d}));
    done += n;
  }
  return {torch::cat(draws), torch::cat(truths)};
}

}  // namespace

PosteriorEvaluation evaluate_posterior(models::ContinuousApproximatorImpl& approximator,
                                       const models::SimulatorSpec& simulator_spec, const EvaluationOptions& options,
                                       torch::Device device) {
  torch::NoGradGuard no_grad;
  const bool was_training = approximator.is_training();
  approximator.eval();
  const models::Simulator simulator(simulator_spec, options.seed + kEvaluationSeedOffset, device);
  for (int64_t batch_size = options.batch_size;; batch_size = std::max<int64_t>(1, batch_size / 2)) {
    try {
      const auto [draws, truths] = posterior_draws(approximator, simulator, options, batch_size);
      approximator.train(was_training);
      const auto prior_variance = simulator.prior_variance().to(device);
      const auto names = simulator.parameter_names();
      return {models::compute_diagnostics(draws, truths, prior_variance, names),
              models::posterior_items(draws, truths, prior_variance, names)};
    } catch (const std::exception& error) {
      if (!memory::is_oom_error(error) || batch_size == 1) {
        approximator.train(was_training);
        throw;
      }
    }
    memory::safe_empty_cache();
  }
}

}  // namespace bfhpo::trials
