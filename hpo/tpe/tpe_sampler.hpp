// Native TPE after Optuna 3.1's TPESampler. Trials are split into "below"
// (the best gamma(n) = min(ceil(0.1 n), 25)) and "above"; a Parzen estimator
// of each, l(x) and g(x), is fitted with the weights ramp; n_ei_candidates
// drawn from l(x) are scored by log l(x) - log g(x) and the best feasible one
// wins. Ranking: COMPLETE by value, then PRUNED by (later step first, then
// last intermediate value), then RUNNING trials of other workers as the worst
// (constant liar); FAIL and WAITING trials are ignored. With `group`, the
// space is decomposed into groups of parameters that exist together (same
// `when` condition), each with its own multivariate estimator.
// Two defaults differ from Optuna, each measured by bench/compare_optuna.py
// and each switchable back: the n_startup_trials startup trials form a Latin
// hypercube (Optuna: independent uniform draws), and the multivariate
// bandwidth follows the observations' spread (see tpe::ParzenOptions).
// {"startup": "random", "bandwidth": "optuna"} is Optuna 3.1's algorithm.
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

struct TpeOptions {
  int n_startup_trials = 10;
  StartupDesign startup = StartupDesign::LatinHypercube;
  bool bandwidth_from_spread = true;  // see tpe::ParzenOptions
  int n_ei_candidates = 24;
  bool multivariate = true;
  bool group = true;
  bool constant_liar = true;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  double prior_weight = 1.0;
  bool optuna31_kernel_scale = true;  // see tpe::ParzenOptions
};

// Optuna's default gamma and weights.
int tpe_gamma(int n);
Eigen::ArrayXd tpe_default_weights(int n);

class TpeSampler : public Sampler {
 public:
  explicit TpeSampler(TpeOptions options = {}) : options_(options) {}
  Proposal sample(const SampleRequest& request) override;
  std::string name() const override { return "tpe"; }

 private:
  TpeOptions options_;
};

}  // namespace bfhpo::hpo
