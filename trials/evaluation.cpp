#include "trials/evaluation.hpp"

#include <algorithm>

namespace bfhpo::trials {
namespace {

constexpr uint64_t kEvaluationSeedOffset = 0xE7A1ULL << 20;

}  // namespace

models::Diagnostics evaluate_posterior(models::ContinuousApproximatorImpl& approximator, models::IrtRanges ranges,
                                       const EvaluationOptions& options, torch::Device device) {
  torch::NoGradGuard no_grad;
  const bool was_training = approximator.is_training();
  approximator.eval();
  const models::IrtSimulator simulator(ranges, options.seed + kEvaluationSeedOffset, device);
  std::vector<torch::Tensor> draws, truths;
  int64_t done = 0;
  for (uint64_t index = 0; done < options.n_datasets; ++index) {
    const int64_t n = std::min(options.batch_size, options.n_datasets - done);
    const auto batch = simulator.sample(n, index);
    const int64_t d = batch.item_params.size(-1);
    draws.push_back(approximator.sample(options.n_draws, batch.responses).reshape({-1, options.n_draws, d}));
    truths.push_back(batch.item_params.reshape({-1, d}));
    done += n;
  }
  approximator.train(was_training);
  return models::compute_diagnostics(torch::cat(draws), torch::cat(truths),
                                     models::IrtSimulator::prior_variance().to(device),
                                     models::IrtSimulator::parameter_names());
}

}  // namespace bfhpo::trials
