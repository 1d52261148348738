#include "bench/irt_mcmc.hpp"

#include "trials/chain_diagnostics.hpp"

#include <cmath>
#include <stdexcept>

namespace bfhpo::bench {
namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kFloat64);
constexpr double kTargetAcceptance = 0.44;

// log P(y_pj | theta_p, item_j) of every observed cell: [C, P, J] (0 where missing).
torch::Tensor cell_log_likelihood(const models::ItemResponseModel& model, const torch::Tensor& theta,
                                  const torch::Tensor& item_params, const torch::Tensor& categories,
                                  const torch::Tensor& mask) {
  const auto probabilities = models::category_probabilities(model, theta, item_params);  // [C, P, J, K]
  return probabilities.gather(-1, categories).squeeze(-1).clamp_min(1e-300).log() * mask;
}

// One Metropolis decision per element: accepts where log u < log ratio.
torch::Tensor accept(const torch::Tensor& log_ratio, at::Generator& generator) {
  return torch::empty_like(log_ratio).uniform_(0.0, 1.0, generator).log() < log_ratio;
}

void adapt(torch::Tensor& step, const torch::Tensor& accepted_count, int64_t sweeps) {
  step.mul_((2.0 * (accepted_count / static_cast<double>(sweeps) - kTargetAcceptance)).exp());
}

}  // namespace

McmcResult sample_item_posterior(const models::ItemResponseModel& model, const torch::Tensor& responses,
                                 const torch::Tensor& mask, const McmcOptions& options) {
  torch::NoGradGuard no_grad;
  if (responses.dim() != 2 || mask.sizes() != responses.sizes())
    throw std::invalid_argument("sample_item_posterior: responses and mask must be [P, J]");
  const int64_t c = options.chains, p = responses.size(0), j = responses.size(1), d = model.param_dim();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto categories = responses.to(torch::kLong).unsqueeze(0).expand({c, p, j}).unsqueeze(-1).contiguous();
  const auto observed = mask.to(torch::kFloat64).unsqueeze(0).expand({c, p, j}).contiguous();

  auto theta = at::normal(0.0, 1.0, {c, p}, generator, kDouble);
  auto items = model.draw_item_params(c, j, generator).to(torch::kFloat64);
  auto cells = cell_log_likelihood(model, theta, items, categories, observed);
  auto item_prior = model.log_prior(items);  // [C, J]
  auto theta_step = torch::full({c, p}, 1.0, kDouble);
  auto item_step = torch::full({c, j, d}, 0.3, kDouble);
  auto theta_accepted = torch::zeros({c, p}, kDouble);
  auto item_accepted = torch::zeros({c, j, d}, kDouble);

  std::vector<torch::Tensor> kept;
  int64_t window = 0;
  const int64_t total = options.warmup_sweeps + options.sampling_sweeps;
  for (int64_t sweep = 0; sweep < total; ++sweep) {
    const auto theta_proposal = theta + theta_step * at::normal(0.0, 1.0, {c, p}, generator, kDouble);
    const auto proposal_cells = cell_log_likelihood(model, theta_proposal, items, categories, observed);
    const auto theta_log_ratio = (proposal_cells - cells).sum(2) - 0.5 * (theta_proposal.square() - theta.square());
    const auto theta_ok = accept(theta_log_ratio, generator);
    theta = torch::where(theta_ok, theta_proposal, theta);
    cells = torch::where(theta_ok.unsqueeze(2), proposal_cells, cells);
    theta_accepted += theta_ok.to(torch::kFloat64);

    for (int64_t k = 0; k < d; ++k) {
      auto proposal = items.clone();
      proposal.select(-1, k).add_(item_step.select(-1, k) * at::normal(0.0, 1.0, {c, j}, generator, kDouble));
      const auto proposal_item_cells = cell_log_likelihood(model, theta, proposal, categories, observed);
      const auto proposal_prior = model.log_prior(proposal);
      const auto log_ratio = (proposal_item_cells - cells).sum(1) + (proposal_prior - item_prior);
      const auto ok = accept(log_ratio, generator);  // NaN or -inf (outside the prior) rejects
      items = torch::where(ok.unsqueeze(-1), proposal, items);
      item_prior = torch::where(ok, proposal_prior, item_prior);
      cells = torch::where(ok.unsqueeze(1), proposal_item_cells, cells);
      item_accepted.select(-1, k) += ok.to(torch::kFloat64);
    }

    ++window;
    if (sweep < options.warmup_sweeps && window == options.adapt_every) {
      adapt(theta_step, theta_accepted, window);
      adapt(item_step, item_accepted, window);
      theta_accepted.zero_();
      item_accepted.zero_();
      window = 0;
    }
    if (sweep + 1 == options.warmup_sweeps) {
      theta_accepted.zero_();
      item_accepted.zero_();
      window = 0;
    }
    if (sweep >= options.warmup_sweeps && (sweep - options.warmup_sweeps + 1) % options.thin == 0) kept.push_back(items);
  }
  const auto chains = torch::stack(kept, 1);  // [C, S, J, D]
  McmcResult result;
  result.split_rhat = trials::split_rhat(chains);
  result.draws = chains.permute({2, 0, 1, 3}).reshape({j, -1, d}).contiguous();
  result.ability_acceptance = theta_accepted.mean().item<double>() / static_cast<double>(options.sampling_sweeps);
  result.item_acceptance = item_accepted.mean().item<double>() / static_cast<double>(options.sampling_sweeps);
  return result;
}

}  // namespace bfhpo::bench
