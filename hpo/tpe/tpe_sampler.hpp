// Native TPE after Optuna 3.1's TPESampler. Trials are split into "below"
// (the best gamma(n) = min(ceil(0.1 n), 25)) and "above"; a Parzen estimator
// of each, l(x) and g(x), is fitted with the weights ramp; n_ei_candidates
// drawn from l(x) are scored by log l(x) - log g(x) and the best feasible one
// wins. Ranking: COMPLETE by value, then PRUNED by (later step first, then
// last intermediate value), then RUNNING trials of other workers as the worst
// (constant liar); FAIL and WAITING trials are ignored. With `group`, the
// space is decomposed into groups of parameters that exist together (same
// `when` condition), each with its own multivariate estimator.
// bfhpo's defaults differ from Optuna in four measured ways (numbers in
// README.md, Benchmarks), each switchable back, all at once with
// {"preset": "optuna"} (`optuna31_tpe_options()`), which is Optuna 3.1's
// algorithm exactly:
// - the n_startup_trials startup trials form a Latin hypercube (Optuna:
//   independent uniform draws);
// - the kernels are true densities (tpe::ParzenOptions::optuna31_kernel_scale);
// - the multivariate bandwidth follows the observations' spread
//   (tpe::ParzenOptions), and with it the below estimator's magic clip counts
//   a quarter of the group's finished trials instead of its own few kernels,
//   so its kernels can narrow as the study goes on (range / 26 at 100 trials,
//   where Optuna's clip stays at range / 12), and the above estimator's
//   kernels are 0.85 of that rule's width, so g(x) keeps sharper track of
//   where the poor trials lie;
// - the below trials are weighted by their improvement on the split value
//   (the best above trial), threshold - value, so the best trials carry the
//   most mass (Optuna: equal weights); the prior kernel weighs their mean.
//   Where a below trial or the threshold is not COMPLETE (a pruned trial's
//   last intermediate value is not on the same scale), Optuna's weights.
// The feasibility predicate vetoes TPE's candidates only: the startup trials
// sample the prior as it is, so an infeasible region shows up in the study
// (the caller prunes such trials at no cost) and the estimator learns where
// it lies.
#pragma once

#include "hpo/random_sampler.hpp"
#include "hpo/sampler.hpp"
#include "hpo/tpe/parzen_estimator.hpp"

namespace bfhpo::hpo {

enum class StartupDesign { LatinHypercube, Random };
enum class BelowWeights { Improvement, Optuna };

struct TpeOptions {
  int n_startup_trials = 10;
  StartupDesign startup = StartupDesign::LatinHypercube;
  bool bandwidth_from_spread = true;  // and the clip and above width that go with it, see above
  BelowWeights below_weights = BelowWeights::Improvement;
  int n_ei_candidates = 24;
  bool multivariate = true;
  bool group = true;
  bool constant_liar = true;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  double prior_weight = 1.0;
  bool optuna31_kernel_scale = false;  // see tpe::ParzenOptions
};

// Optuna 3.1's TPESampler(multivariate=True, group=True, constant_liar=True).
TpeOptions optuna31_tpe_options();

// Optuna's default gamma and weights.
int tpe_gamma(int n);
Eigen::ArrayXd tpe_default_weights(int n);
// bfhpo's below weights: threshold - value per trial (values signed so that
// smaller is better), floored at 1e-12 of the largest and scaled to mean 1;
// all equal when no value improves on the threshold.
Eigen::ArrayXd tpe_improvement_weights(const Eigen::ArrayXd& values, double threshold);

class TpeSampler : public Sampler {
 public:
  explicit TpeSampler(TpeOptions options = {}) : options_(options) {}
  Proposal sample(const SampleRequest& request) override;
  std::string name() const override { return "tpe"; }

 private:
  TpeOptions options_;
};

}  // namespace bfhpo::hpo
