#include "models/calibration_penalty.hpp"

#include "models/networks/checkpoint.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace bfhpo::models {

torch::Tensor straight_through_ranks(const torch::Tensor& true_log_prob, const torch::Tensor& sample_log_prob,
                                     double ste_temperature) {
  if (ste_temperature <= 0) throw std::invalid_argument("calibration: ste_temperature must be positive");
  auto scaled = (sample_log_prob - true_log_prob.unsqueeze(1)) / ste_temperature;
  auto soft = torch::sigmoid(scaled);
  auto hard = (scaled > 0).to(soft.dtype());
  return (hard + soft - soft.detach()).mean(1);
}

torch::Tensor rank_calibration_penalty(const torch::Tensor& true_log_prob,
                                       const torch::Tensor& sample_log_prob, const CalibrationSpec& spec) {
  const auto alpha = straight_through_ranks(true_log_prob, sample_log_prob, spec.ste_temperature);
  const int64_t rows = true_log_prob.size(0);
  auto grid = torch::arange(1, rows + 1, alpha.options()) / static_cast<double>(rows + 1);
  auto excess = std::get<0>(alpha.sort()) - grid;
  if (spec.conservative) excess = torch::relu(excess);
  return excess.pow(2).mean();
}

torch::Tensor calibration_penalty(CouplingFlow& flow, const torch::Tensor& theta,
                                  const torch::Tensor& context, const CalibrationSpec& spec) {
  if (spec.n_post_samples < 1 || spec.log_prob_chunk_size < 1)
    throw std::invalid_argument("calibration: n_post_samples and log_prob_chunk_size must be positive");
  const int64_t rows = theta.size(0);
  const int64_t dim = theta.size(1);
  // First, so that a fresh flow's actnorm is data-initialised on the true parameters.
  auto true_log_prob = flow->log_prob(theta, context);
  // Drawn as CouplingFlow::sample draws them (one base draw for all rows and
  // samples, so the draws do not depend on the chunk), mapped through the flow
  // log_prob_chunk_size samples at a time: sampling holds one chunk's flow
  // activations, not n_post_samples'.
  torch::Tensor samples;
  {
    torch::NoGradGuard no_grad;
    const auto z = torch::randn({rows, spec.n_post_samples, dim}, context.options());
    std::vector<torch::Tensor> drawn;
    for (int64_t start = 0; start < spec.n_post_samples; start += spec.log_prob_chunk_size) {
      const int64_t count = std::min(spec.log_prob_chunk_size, spec.n_post_samples - start);
      drawn.push_back(flow->inverse(z.narrow(1, start, count).reshape({rows * count, dim}),
                                    context.repeat_interleave(count, 0))
                          .first.reshape({rows, count, dim}));
    }
    samples = torch::cat(drawn, 1);
  }
  const auto params = flow->parameters();
  const auto module = flow.ptr();
  std::vector<torch::Tensor> chunks;
  for (int64_t start = 0; start < spec.n_post_samples; start += spec.log_prob_chunk_size) {
    const int64_t count = std::min(spec.log_prob_chunk_size, spec.n_post_samples - start);
    auto chunk = samples.narrow(1, start, count).reshape({rows * count, dim});
    chunks.push_back(checkpoint(
        [module, rows, count](const std::vector<torch::Tensor>& in) {
          return module->log_prob(in[0], in[1].repeat_interleave(count, 0)).reshape({rows, count});
        },
        {chunk, context}, params));
  }
  return rank_calibration_penalty(true_log_prob, torch::cat(chunks, 1), spec);
}

}  // namespace bfhpo::models
