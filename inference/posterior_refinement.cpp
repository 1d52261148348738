#include "inference/posterior_refinement.hpp"

#include "common/json_number.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "models/simulators/seed_mix.hpp"
#include "inference/chain_diagnostics.hpp"
#include "inference/grid_ability_posterior.hpp"
#include "inference/marginal_likelihood.hpp"
#include "inference/pareto_smoothed_importance.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <vector>

namespace bfhpo::inference {
namespace {

using nlohmann::json;

constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();
// Stan's convergence criteria, which the reference meets.
constexpr double kMaxRhat = 1.01;
constexpr double kMinEss = 400.0;
const auto kDouble = torch::TensorOptions().dtype(torch::kFloat64);
// Warm-up sweeps between two updates of the random walks' scales.
constexpr int64_t kAdaptEvery = 25;
// Sweeps between two recomputations of the chains' summed tables from scratch (rounding drift).
constexpr int64_t kRefreshEvery = 50;
// The central intervals an item is judged by (ItemJudgement): level and its normal quantile.
constexpr std::array<std::pair<double, double>, 3> kJudgedLevels{
    {{0.50, 0.6744897501960817}, {0.80, 1.2815515655446004}, {0.95, 1.959963984540054}}};

// log p(params) + log marginal likelihood of joint draws [S, J, D]: [S] (-inf outside the prior's support).
// The likelihood [S] from the float32 grid table: the proposals' log q is a float32 flow's.
torch::Tensor log_target(const models::ItemResponseModel& model, const torch::Tensor& log_marginal_likelihood,
                         const torch::Tensor& params) {
  return model.log_prior(params).sum(1) + log_marginal_likelihood;
}

// The amortized draws [J, n, D] as joint proposals [n, J, D] (draw s of every item is one proposal).
torch::Tensor joint_draws(const PosteriorDraws& draws) { return draws.draws.to(torch::kFloat64).transpose(0, 1); }

// The Monte Carlo standard errors a reweighted mean or sd may move before it counts as evidence, when `parameters`
// are judged at once: the two-sided 5% normal quantile of the family (Bonferroni), 2.8 for 10, 3.7 for 200. At a
// single parameter's 2, one of a data set's 40 parameters moved by noise alone in most data sets.
double monte_carlo_allowance(int64_t parameters) {
  const double tail = 0.05 / static_cast<double>(std::max<int64_t>(parameters, 1));
  return std::sqrt(2.0) * torch::erfinv(torch::tensor(1.0 - tail, kDouble)).item<double>();
}

// How far weights [n] (Pareto smoothed, effective sample size `ess`) move the central intervals of draws x [n, D]:
// the largest difference, over parameters and the judged levels, between the amortized interval's stated level and
// its coverage under a normal of the reweighted mean and sd, each moved towards the amortized one by `allowance`
// Monte Carlo standard errors (noise is not evidence). One-sided: only coverage lost counts. Returns {difference,
// level}.
std::pair<double, double> coverage_difference(const torch::Tensor& x, const std::vector<double>& weight_values,
                                              double ess, double allowance, bool one_sided) {
  const auto weights = torch::tensor(weight_values, kDouble).unsqueeze(1);  // [n, 1]
  const auto amortized_mean = x.mean(0), amortized_sd = x.std(0);
  const auto mean = (weights * x).sum(0);
  const auto sd = (weights * (x - mean).pow(2)).sum(0).sqrt();
  const auto shift = ((mean - amortized_mean).abs() - allowance * sd / std::sqrt(ess)).clamp_min(0.0);
  const auto sd_error = allowance * sd / std::sqrt(2.0 * ess);
  const auto wider = torch::maximum(amortized_sd, sd - sd_error);
  const auto narrower = one_sided ? sd : torch::minimum(amortized_sd, sd + sd_error);
  const auto judged_sd = torch::where(sd > amortized_sd, wider, narrower).clamp_min(1e-300);
  std::pair<double, double> largest{0.0, 0.0};
  for (const auto& [level, z] : kJudgedLevels) {
    const auto upper = (z * amortized_sd - shift) / judged_sd, lower = (-z * amortized_sd - shift) / judged_sd;
    const auto coverage = 0.5 * (torch::erfc(-upper / std::sqrt(2.0)) - torch::erfc(-lower / std::sqrt(2.0)));
    const double difference = (one_sided ? level - coverage : (level - coverage).abs()).max().item<double>();
    if (!(difference <= largest.first)) largest = {difference, level};
  }
  return largest;
}

// The items' coverage differences [J] as one judgement.
ItemJudgement judgement_of(const std::vector<std::pair<double, double>>& item_differences, const PosteriorDraws& amortized) {
  ItemJudgement judgement;
  for (size_t j = 0; j < item_differences.size(); ++j) {
    const auto& [difference, level] = item_differences[j];
    if (!(difference <= judgement.largest_coverage_loss)) {
      judgement.largest_coverage_loss = difference;
      judgement.worst_item = amortized.item_names[j];
      judgement.worst_level = level;
    }
  }
  judgement.stands = judgement.largest_coverage_loss <= kMostItemCoverageLoss;
  return judgement;
}

// Each item's amortized draws reweighted (Pareto smoothed) toward its conditional exact posterior, the
// other items at their amortized posterior means (posterior_refinement.hpp): how far that moves them.
ItemJudgement judge_items(const models::ItemResponseModel& model, const MarginalLikelihood& likelihood,
                          const PosteriorDraws& amortized) {
  const auto draws = amortized.draws.to(torch::kFloat64);  // [J, n, D]
  const int64_t items = draws.size(0), n = draws.size(1);
  const auto reference = draws.mean(1);                    // [J, D]
  const auto table = likelihood.table(reference.unsqueeze(0));
  const auto log_prior = model.log_prior(draws.transpose(0, 1));  // [n, J]
  const auto log_q = amortized.log_prob.to(torch::kFloat64);      // [J, n]
  // Each item's largest coverage loss and its level, the items on the cores side by side.
  std::vector<std::pair<double, double>> item_losses(static_cast<size_t>(items), {0.0, 0.0});
  const double allowance = monte_carlo_allowance(draws.numel() / n);
  trials::for_each_on_workers(items, [&](int64_t j) {
    const auto log_likelihood = likelihood.changed_item_log_likelihood(table, j, reference[j], draws[j]);
    const auto log_ratio_tensor = (log_likelihood + log_prior.select(1, j) - log_q[j]).contiguous();
    const std::vector<double> log_ratios(log_ratio_tensor.data_ptr<double>(), log_ratio_tensor.data_ptr<double>() + n);
    const auto smoothed = pareto_smooth(log_ratios);
    item_losses[static_cast<size_t>(j)] =
        coverage_difference(draws[j], smoothed.weights, smoothed.effective_sample_size, allowance,
                            /*one_sided=*/true);
  });
  return judgement_of(item_losses, amortized);
}

// The joint weights' view of every item (two-sided: the reweighted posterior is the exact one).
ItemJudgement judge_items_jointly(const PosteriorDraws& amortized, const ParetoSmoothedWeights& smoothed) {
  const auto draws = amortized.draws.to(torch::kFloat64);  // [J, n, D]
  const double allowance = monte_carlo_allowance(draws.numel() / draws.size(1));
  std::vector<std::pair<double, double>> differences;
  for (int64_t j = 0; j < draws.size(0); ++j)
    differences.push_back(coverage_difference(draws[j], smoothed.weights, smoothed.effective_sample_size, allowance,
                                              /*one_sided=*/false));
  return judgement_of(differences, amortized);
}

void apply_importance(Refinement& out, const models::ItemResponseModel& model, const MarginalLikelihood& likelihood,
                      const torch::Tensor& log_marginal_likelihood, const PosteriorDraws& amortized, uint64_t seed) {
  torch::NoGradGuard no_grad;
  const auto proposals = joint_draws(amortized);
  const auto log_q = amortized.log_prob.to(torch::kFloat64).sum(0);
  const auto log_ratio_tensor = (log_target(model, log_marginal_likelihood, proposals) - log_q).contiguous();
  const std::vector<double> log_ratios(log_ratio_tensor.data_ptr<double>(),
                                       log_ratio_tensor.data_ptr<double>() + log_ratio_tensor.numel());
  const auto smoothed = pareto_smooth(log_ratios);
  out.pareto_k = smoothed.pareto_k;
  out.pareto_k_threshold = pareto_k_threshold(static_cast<int64_t>(log_ratios.size()));
  out.importance_ess = smoothed.effective_sample_size;
  out.importance_reliable = smoothed.reliable() && smoothed.effective_sample_size >= kFewestEffectiveDraws;
  out.posterior = amortized;
  out.method = "amortized";
  out.items = out.importance_reliable ? judge_items_jointly(amortized, smoothed) : judge_items(model, likelihood, amortized);
  // Unreliable weights: the items judged alone stand or not. Reliable ones that move no interval beyond
  // Monte Carlo error confirm the draws, which then stand: resampling them would only add that error.
  if (!out.importance_reliable || out.items->stands) return;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(models::mix_seed(seed, 0x15AA5E5ULL));
  const double uniform = at::rand({1}, generator, kDouble).item<double>();
  const auto indices = systematic_resample(smoothed.weights, amortized.draws.size(1), uniform);
  const auto index = torch::tensor(indices, torch::kLong);
  out.resampled = index;
  out.posterior.draws = amortized.draws.index_select(1, index);
  out.posterior.log_prob = amortized.log_prob.index_select(1, index);
  out.method = "importance";
}

// Lower Cholesky factors [J, D, D] of the covariance of draws [J, S, D] (a small ridge keeps them positive definite).
torch::Tensor covariance_factors(const torch::Tensor& draws) {
  const auto centred = draws - draws.mean(1, true);
  const auto covariance = torch::matmul(centred.transpose(1, 2), centred) / static_cast<double>(draws.size(1) - 1);
  const auto d = draws.size(2);
  const auto ridge = 1e-8 * (covariance.diagonal(0, 1, 2).mean(1).clamp_min(1e-12)).reshape({-1, 1, 1}) *
                     torch::eye(d, kDouble);
  return torch::linalg_cholesky(covariance + ridge);
}

// Scale mixtures for the independence proposals: a multivariate t of 5 degrees of freedom, heavier-tailed
// than the near-Gaussian posterior it approximates, so no region of it is proposed too rarely.
constexpr double kTDegrees = 5.0;

// Sampling sweeps between two checks of R-hat and the ESS (RefinementOptions::until_converged).
constexpr int64_t kSweepsBetweenChecks = 100;

// Chains that share one generator and one adaptation, as one batch of tensors (per tensor operation the
// batch costs little more than one chain): two. Fixed, so that the draws do not depend on the machine's cores.
constexpr int64_t kChainsPerGroup = 2;

// C chains of the sampler above that share one generator and one adaptation, from `starts` [C, J, D], their
// proposals first fitted to the amortized draws [J, n, D]: warmed up once, then sampled in as many rounds as
// the caller asks, each round's draws exactly those one longer run would have drawn.
class ChainGroup {
 public:
  ChainGroup(const models::ItemResponseModel& model, const MarginalLikelihood& likelihood,
             const torch::Tensor& amortized, torch::Tensor starts, uint64_t seed)
      : model_(model),
        likelihood_(likelihood),
        chains_(starts.size(0)),
        items_(likelihood.items()),
        d_(model.param_dim()),
        generator_(at::make_generator<at::CPUGeneratorImpl>(seed)),
        state_(starts.contiguous()),
        centres_(amortized.mean(1)),
        factors_(covariance_factors(amortized)),
        target_acceptance_(d_ == 1 ? 0.44 : 0.3),
        log_scale_(torch::full({items_}, std::log(2.38 / std::sqrt(static_cast<double>(d_))), kDouble)),
        accepted_(torch::zeros({items_}, kDouble)),
        log_prior_(model.log_prior(state_).contiguous()) {
    const auto roles = model.scale_roles();
    free_scale_ = std::find(roles.begin(), roles.end(), models::ItemResponseModel::ScaleRole::LogDiscrimination) !=
                  roles.end();
    location_components_ = static_cast<double>(
        items_ * std::count(roles.begin(), roles.end(), models::ItemResponseModel::ScaleRole::Location));
  }

  // `sweeps` sweeps adapting the random walks' scales every kAdaptEvery and, after each of the first three
  // quarters, the proposals' centres and covariances to the chains' own draws of that quarter.
  void warm_up(int64_t sweeps) {
    c10::InferenceMode inference_mode;
    std::vector<torch::Tensor> window;
    for (int64_t sweep = 0; sweep < sweeps; ++sweep) {
      this->sweep(false);
      window.push_back(state_.clone());
      if ((sweep + 1) % kAdaptEvery == 0) {
        log_scale_ += 2.0 * (accepted_ / static_cast<double>(kAdaptEvery) - target_acceptance_);
        accepted_.zero_();
        for (int64_t which = 0; which < 2; ++which) {
          frame_log_step_[which] += 2.0 * (frame_accepted_[which] / static_cast<double>(kAdaptEvery) - 0.44);
          frame_accepted_[which] = 0.0;
        }
      }
      if ((sweep + 1) % (sweeps / 4) == 0 && sweep + 1 < sweeps) {
        // [sweeps x C, J, D] -> [J, sweeps x C, D]: the chains' own mean and covariance over the last window
        // replace the amortized (or the last window's) ones.
        // An item whose chains did not move in the window keeps the proposals it had.
        const auto own = torch::cat(window).transpose(0, 1);
        const auto moved = std::get<0>(own.var(1).min(1)).gt(0.0);  // [J]
        centres_ = torch::where(moved.unsqueeze(1), own.mean(1), centres_);
        factors_ = torch::where(moved.reshape({-1, 1, 1}), covariance_factors(own), factors_);
        window.clear();
      }
    }
  }

  // `sweeps` more sampling sweeps, each one's state kept.
  void sample(int64_t sweeps) {
    c10::InferenceMode inference_mode;
    for (int64_t sweep = 0; sweep < sweeps; ++sweep) {
      this->sweep(true);
      kept_.push_back(state_.clone());
    }
  }

  int64_t chains() const { return chains_; }
  // The sampling sweeps' draws [C, sweeps, J, D].
  torch::Tensor draws() const { return torch::stack(kept_, 1); }
  // The random walks' acceptance rate over the sampling sweeps, items and chains.
  double acceptance() const { return sampled_acceptance_ / static_cast<double>(kept_.size() * items_); }

 private:
  // log of the independence proposals' densities at x [..., J, D], up to a constant: [..., J].
  torch::Tensor independence_log_q(const torch::Tensor& x) const {
    const auto w = at::linalg_solve_triangular(factors_, (x - centres_).unsqueeze(-1), false).squeeze(-1);
    return -0.5 * (kTDegrees + static_cast<double>(d_)) * torch::log1p(w.pow(2).sum(-1) / kTDegrees);
  }

  // The abilities' location (which 0) or log scale (1), which item steps can move only one item at a time:
  // a random-walk step of every item at once (a transformation-group move, Liu & Sabatti 2000: the
  // acceptance carries the map's log |det|).
  void step_frame(int64_t which) {
    const auto move = at::normal(0.0, std::exp(frame_log_step_[which]), {chains_}, generator_, kDouble);
    const auto still = torch::zeros({chains_}, kDouble);
    const auto& location = which == 0 ? move : still;
    const auto& scale = which == 1 ? move : still;
    const auto proposal = model_.rescale_abilities(state_, location, scale);
    const auto proposal_prior = model_.log_prior(proposal);
    const auto proposal_likelihood = likelihood_.rescaled_log_likelihood(table_, location, scale);
    const auto log_ratio = (proposal_likelihood + proposal_prior.sum(1) - log_likelihood_ - log_prior_.sum(1) +
                            location_components_ * scale)
                               .nan_to_num(-std::numeric_limits<double>::infinity());
    const auto accept = torch::empty({chains_}, kDouble).uniform_(0.0, 1.0, generator_).log() < log_ratio;
    frame_accepted_[which] += accept.to(torch::kFloat64).mean().item<double>();
    const auto accepted = accept.nonzero().squeeze(1);
    if (accepted.numel() == 0) return;
    // The accepted chains' tables from scratch, in one call.
    const auto moved = proposal.index_select(0, accepted);
    const auto fresh = likelihood_.table(moved);
    state_.index_copy_(0, accepted, moved);
    log_prior_.index_copy_(0, accepted, proposal_prior.index_select(0, accepted));
    table_.scaled.index_copy_(0, accepted, fresh.scaled);
    table_.log_scale.index_copy_(0, accepted, fresh.log_scale);
    table_.marginal.index_copy_(0, accepted, fresh.marginal);
    log_likelihood_ = MarginalLikelihood::log_likelihood(table_).contiguous();
  }

  // Every item: a random walk, then an independence proposal from the item's t approximation; then the
  // abilities' frame.
  void sweep(bool sampling) {
    if (sweeps_done_ % kRefreshEvery == 0) {
      table_ = likelihood_.table(state_);
      log_likelihood_ = likelihood_.log_likelihood(table_).contiguous();
    }
    ++sweeps_done_;
    // Every proposal of the sweep at once, a few batched tensor operations rather than a few for each item
    // (on tensors this small their overhead is most of the cost): item j's random walk starts from its state
    // at the sweep's start, which only its own two steps change, and the independence proposals depend on
    // no state. candidates[0] is that state, [1] the random walk, [2] the independence proposal.
    const auto walk = state_ + log_scale_.exp().reshape({1, -1, 1}) *
                                   torch::matmul(factors_, at::normal(0.0, 1.0, {chains_, items_, d_, 1}, generator_, kDouble))
                                       .squeeze(-1);
    const auto mixing =
        (at::_standard_gamma(torch::full({chains_, items_, 1}, 0.5 * kTDegrees, kDouble), generator_) * (2.0 / kTDegrees))
            .rsqrt();
    const auto independent =
        centres_ + torch::matmul(factors_, at::normal(0.0, 1.0, {chains_, items_, d_, 1}, generator_, kDouble)).squeeze(-1) *
                       mixing;
    const auto candidates = torch::stack({state_, walk, independent}).contiguous();  // [3, C, J, D]
    const auto log_prior = model_.log_prior(candidates).contiguous();                 // [3, C, J]
    const auto log_q = independence_log_q(candidates).contiguous();                  // [3, C, J]
    const auto grids = likelihood_.category_grid(candidates.reshape({-1, d_}));      // [3 C J, K, G]
    const auto log_uniform = torch::empty({2, chains_, items_}, kDouble).uniform_(0.0, 1.0, generator_).log().contiguous();
    const int64_t grid_size = grids.size(1) * grids.size(2);
    const auto at = [&](int64_t which, int64_t c, int64_t j) { return (which * chains_ + c) * items_ + j; };
    std::vector<double> ratio(static_cast<size_t>(grid_size)), marginal(static_cast<size_t>(likelihood_.persons()));
    std::vector<int64_t> held(static_cast<size_t>(chains_ * items_), 0);  // the candidate each chain's item holds
    double* log_likelihood = log_likelihood_.data_ptr<double>();
    for (int64_t j = 0; j < items_; ++j) {
      for (int64_t which = 1; which <= 2; ++which) {
        int64_t accepted = 0;
        for (int64_t c = 0; c < chains_; ++c) {
          const int64_t from = held[static_cast<size_t>(c * items_ + j)];
          const double* p_from = grids.data_ptr<double>() + at(from, c, j) * grid_size;
          const double* p_to = grids.data_ptr<double>() + at(which, c, j) * grid_size;
          for (int64_t i = 0; i < grid_size; ++i) ratio[static_cast<size_t>(i)] = p_to[i] / std::max(p_from[i], 1e-300);
          const double moved = likelihood_.moved_log_likelihood(table_, c, j, ratio.data(), marginal.data());
          // log q(current) - log q(proposal) for the independence proposal; the random walk's is symmetric.
          const double log_q_ratio =
              which == 2 ? log_q.data_ptr<double>()[at(from, c, j)] - log_q.data_ptr<double>()[at(2, c, j)] : 0.0;
          const double log_ratio = moved + log_prior.data_ptr<double>()[at(which, c, j)] - log_likelihood[c] -
                                   log_prior.data_ptr<double>()[at(from, c, j)] + log_q_ratio;
          // NaN (a proposal outside the support) is rejected.
          if (!(log_uniform.data_ptr<double>()[((which - 1) * chains_ + c) * items_ + j] < log_ratio)) continue;
          likelihood_.move(table_, c, j, ratio.data(), marginal.data());
          log_likelihood[c] = moved;
          held[static_cast<size_t>(c * items_ + j)] = which;
          ++accepted;
        }
        if (which == 1) {
          const double rate = static_cast<double>(accepted) / static_cast<double>(chains_);
          accepted_.data_ptr<double>()[j] += rate;
          if (sampling) sampled_acceptance_ += rate;
        }
      }
    }
    // Each chain's items take the candidates they hold.
    for (int64_t c = 0; c < chains_; ++c)
      for (int64_t j = 0; j < items_; ++j) {
        const int64_t which = held[static_cast<size_t>(c * items_ + j)];
        std::copy_n(candidates.data_ptr<double>() + at(which, c, j) * d_, d_, state_.data_ptr<double>() + (c * items_ + j) * d_);
        log_prior_.data_ptr<double>()[c * items_ + j] = log_prior.data_ptr<double>()[at(which, c, j)];
      }
    step_frame(0);
    if (free_scale_) step_frame(1);
  }

  const models::ItemResponseModel& model_;
  const MarginalLikelihood& likelihood_;
  int64_t chains_, items_, d_;
  at::Generator generator_;
  torch::Tensor state_;                // [C, J, D]
  torch::Tensor centres_, factors_;    // the proposals' [J, D] and [J, D, D]
  double target_acceptance_;
  torch::Tensor log_scale_, accepted_;  // the random walks' [J]
  torch::Tensor log_prior_;             // [C, J]
  MarginalLikelihood::PersonGridTable table_;
  torch::Tensor log_likelihood_;        // [C]
  bool free_scale_ = false;
  double location_components_ = 0.0;
  std::array<double, 2> frame_log_step_{std::log(0.05), std::log(0.05)};  // location, log scale
  std::array<double, 2> frame_accepted_{0.0, 0.0};
  int64_t sweeps_done_ = 0;
  double sampled_acceptance_ = 0.0;
  std::vector<torch::Tensor> kept_;
};

void apply_mcmc(Refinement& out, const models::ItemResponseModel& model, const MarginalLikelihood& likelihood,
                const PosteriorDraws& amortized, const RefinementOptions& options) {
  torch::NoGradGuard no_grad;
  const int64_t chains = options.chains, items = likelihood.items(), d = model.param_dim();
  const int64_t n_draws = amortized.draws.size(1);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(models::mix_seed(options.seed, 0x3C3C3CULL));
  const auto amortized_draws = amortized.draws.to(torch::kFloat64);  // [J, n, D]
  const auto starts = at::randperm(n_draws, generator, torch::TensorOptions().dtype(torch::kLong)).narrow(0, 0, chains);
  const auto start_states = amortized_draws.index_select(1, starts).transpose(0, 1).contiguous();  // [C, J, D]
  const int64_t n_groups = (chains + kChainsPerGroup - 1) / kChainsPerGroup;
  std::vector<ChainGroup> groups;
  for (int64_t g = 0; g < n_groups; ++g) {
    const int64_t first = g * kChainsPerGroup;
    groups.emplace_back(model, likelihood, amortized_draws,
                        start_states.narrow(0, first, std::min(kChainsPerGroup, chains - first)).clone(),
                        models::mix_seed(options.seed, 0x3C3C3D00ULL + static_cast<uint64_t>(g)));
  }
  trials::for_each_on_workers(n_groups, [&](int64_t g) { groups[static_cast<size_t>(g)].warm_up(options.warmup_sweeps); });
  torch::Tensor chain_draws;  // [C, S, J, D]
  int64_t sampled = 0;
  while (sampled < options.sampling_sweeps) {
    const int64_t round = options.until_converged
                              ? std::min(kSweepsBetweenChecks, options.sampling_sweeps - sampled)
                              : options.sampling_sweeps;
    trials::for_each_on_workers(n_groups, [&](int64_t g) { groups[static_cast<size_t>(g)].sample(round); });
    sampled += round;
    std::vector<torch::Tensor> parts;
    for (const auto& group : groups) parts.push_back(group.draws());
    chain_draws = torch::cat(parts);
    out.max_rhat = split_rhat(chain_draws).max().item<double>();
    out.min_ess = effective_sample_size(chain_draws).min().item<double>();
    if (out.max_rhat <= kMaxRhat && out.min_ess >= kMinEss) break;
  }
  out.sampling_sweeps = sampled;
  out.acceptance = 0.0;
  for (const auto& group : groups)
    out.acceptance += group.acceptance() * static_cast<double>(group.chains()) / static_cast<double>(chains);
  // n draws spread evenly over the chains' sampling sweeps.
  const int64_t pooled = chains * sampled;
  const auto pick = torch::linspace(0.0, static_cast<double>(pooled - 1), n_draws, kDouble).round().to(torch::kLong);
  const auto pooled_draws = chain_draws.reshape({pooled, items, d}).index_select(0, pick);  // [n, J, D]
  out.posterior = amortized;
  out.posterior.draws = pooled_draws.transpose(0, 1).to(torch::kFloat32).contiguous();
  out.posterior.log_prob = torch::full({items, n_draws}, kNotComputed, torch::kFloat32);
  out.method = "mcmc";
}

}  // namespace

void check_refinement_options(const RefinementOptions& options, int64_t draws, const std::string& what) {
  if (options.method != "importance" && options.method != "mcmc" && options.method != "auto")
    throw UserError(what + ": '" + options.method + "' is not a refinement. Fix: give auto, importance or mcmc");
  if (options.method != "mcmc" && draws < kFewestSmoothedDraws)
    throw UserError(what + ": importance sampling of " + std::to_string(draws) + " draws; Pareto smoothing fits " +
                    "the largest fifth of the weights and needs at least " + std::to_string(kFewestSmoothedDraws) +
                    ". Fix: give --draws 1000 (at least " + std::to_string(kFewestSmoothedDraws) + "), or --refine mcmc");
  if (options.chains < 2)
    throw UserError(what + ": mcmc needs at least 2 chains for R-hat. Fix: give 4");
  if (options.method != "importance" && options.chains > draws)
    throw UserError(what + ": " + std::to_string(options.chains) + " chains from " + std::to_string(draws) +
                    " amortized draws; each chain starts from a draw of its own. Fix: give --refine-chains " +
                    std::to_string(std::min<int64_t>(draws, 4)) + ", or more --draws");
  if (options.warmup_sweeps < 20 || options.sampling_sweeps < 20)
    throw UserError(what + ": at least 20 warm-up and 20 sampling sweeps. Fix: give 500 and 1500");
  if (options.warmup_sweeps > kMostSweeps - options.sampling_sweeps)
    throw UserError(what + ": " + std::to_string(options.warmup_sweeps) + " warm-up and " +
                    std::to_string(options.sampling_sweeps) + " sampling sweeps; bfhpo runs at most " +
                    std::to_string(kMostSweeps) + " together. Fix: give 500 and 1500 (more where R-hat or the ESS "
                    "says so)");
}

Refinement refine_posterior(const models::ItemResponseModel& model, const ResponseMatrix& data,
                            const PosteriorDraws& amortized, const RefinementOptions& options,
                            const DrawAbilityTable* abilities) {
  check_refinement_options(options, amortized.draws.size(1), "posterior refinement");
  const auto start = std::chrono::steady_clock::now();
  const MarginalLikelihood likelihood(model, data);
  Refinement out;
  out.pareto_k = out.pareto_k_threshold = out.importance_ess = out.max_rhat = out.min_ess = out.acceptance = kNotComputed;
  if (options.method != "mcmc")
    apply_importance(out, model, likelihood,
                     abilities ? abilities->log_marginal_likelihood()
                               : GridAbilityPosterior(model, data).log_marginal_likelihood(joint_draws(amortized)),
                     amortized, options.seed);
  if (options.method == "mcmc" || (options.method == "auto" && !out.reliable()))
    apply_mcmc(out, model, likelihood, amortized, options);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

json Refinement::to_json() const {
  return {{"method", method},
          {"pareto_k", number_or_null(pareto_k)},
          {"pareto_k_threshold", number_or_null(pareto_k_threshold)},
          {"importance_ess", number_or_null(importance_ess)},
          {"importance_reliable", importance_reliable},
          {"items_stand", items && items->stands},
          {"item_coverage_loss", number_or_null(items ? items->largest_coverage_loss : kNotComputed)},
          {"max_rhat", number_or_null(max_rhat)},
          {"min_ess", number_or_null(min_ess)},
          {"acceptance", number_or_null(acceptance)},
          {"sampling_sweeps", sampling_sweeps},
          {"seconds", seconds}};
}

std::optional<std::string> Refinement::warning() const {
  if (method == "amortized" && !reliable()) {
    std::string item_part;
    if (items)
      item_part = "; judged alone, item '" + items->worst_item + "': its " +
                  format_number(100.0 * items->worst_level, 3) + "% intervals would cover " + format_number(100.0 * items->largest_coverage_loss, 3) +
                  " points less than stated under its exact conditional posterior (at most " +
                  format_number(100.0 * kMostItemCoverageLoss, 3) + ")";
    const std::string weights_part =
        pareto_k < pareto_k_threshold
            ? "importance ESS " + format_number(importance_ess, 3) + " < " + format_number(kFewestEffectiveDraws, 3) +
                  " of " + std::to_string(posterior.draws.size(1)) + " draws"
            : "Pareto k-hat " + format_number(pareto_k, 3) + " >= " + format_number(pareto_k_threshold, 3) +
                  ", the threshold at " + std::to_string(posterior.draws.size(1)) + " draws";
    return "the amortized posterior is far from the exact one on these data (" + weights_part + item_part +
           ") and importance sampling cannot correct it. Fix: --refine mcmc (or auto)";
  }
  if (method == "mcmc" && (max_rhat > kMaxRhat || min_ess < kMinEss))
    return "the refinement's chains have not converged (largest R-hat " + format_number(max_rhat, 3) +
           ", smallest ESS " + format_number(min_ess, 3) + "; R-hat <= 1.01 and ESS >= 400 wanted). Fix: more "
           "--refine-sweeps and --refine-warmup";
  return std::nullopt;
}

std::string Refinement::line() const {
  std::ostringstream line;
  line << std::setprecision(3) << "refinement: ";
  if (!std::isnan(pareto_k))
    line << "Pareto k-hat " << pareto_k << " of the amortized posterior against the exact one (importance ESS "
         << importance_ess << "; "
         << (importance_reliable                 ? "reliable, k-hat below " + format_number(pareto_k_threshold, 3)
             : pareto_k < pareto_k_threshold ? "unreliable, ESS below " + format_number(kFewestEffectiveDraws, 3)
                                             : "unreliable, k-hat not below " + format_number(pareto_k_threshold, 3))
         << "); ";
  if (method == "mcmc")
    line << "exact posterior by MCMC: largest R-hat " << max_rhat << ", smallest ESS " << min_ess
         << ", acceptance " << acceptance << " (" << sampling_sweeps << " sampling sweeps a chain); ";
  else if (method == "importance")
    line << "draws reweighted to the exact posterior; ";
  else if (importance_reliable && items && items->stands)
    line << "reweighted, no item's interval would cover more than " << 100.0 * items->largest_coverage_loss
         << " points more or less than stated (beyond Monte Carlo error): the amortized draws stand; ";
  else if (items && items->stands)
    line << "judged alone, no item's interval would cover more than " << 100.0 * items->largest_coverage_loss
         << " points less than stated under its exact conditional posterior: the amortized draws stand; ";
  else
    line << "draws left amortized; ";
  line << seconds << " s";
  return line.str();
}

}  // namespace bfhpo::inference
