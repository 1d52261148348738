// Native TPE after Optuna 3.1's TPESampler. Trials are split into "below"
// (the best gamma(n) = min(ceil(0.1 n), 25)) and "above"; a Parzen estimator
// of each, l(x) and g(x), is fitted with the weights ramp; n_ei_candidates
// drawn from l(x) are scored by log l(x) - log g(x) and the best feasible one
// wins. Ranking: COMPLETE by value, then PRUNED by (later step first, then
// last intermediate value), then RUNNING trials of other workers as the worst
// (constant liar); FAIL and WAITING trials are ignored. A trial with
// constraints (Optuna's "constraints" system attribute, hpo/study_objectives.hpp)
// any of which is > 0 ranks after the pruned ones, by its total violation,
// as in Optuna 5, so the good trials are the feasible ones while there are
// enough. With several objectives (request.directions), as Optuna 5's
// TPESampler() there: each parameter is sampled on its own (its own
// candidates, its own univariate estimators; `multivariate` and `group` do
// not apply), the COMPLETE feasible trials are ranked by non-domination rank
// and greedy hypervolume subset selection (tpe/multi_objective_split.hpp),
// and the below group is the best ceil(gamma_share_multi_objective * n),
// with no cap. bfhpo's defaults there differ in three measured ways
// (bench/README.md, multi-objective): the share is 0.2 (Optuna: 0.1); the
// below trials weigh their hypervolume contribution among the below trials
// (BelowWeights::Improvement; Optuna 5: equal weights); and the startup
// trials are not cut for a small budget (a 50-trial study of DTLZ2 lost
// with 5) and are uniform draws, as Optuna's (a Latin hypercube, the
// default with one objective, lost on the mixed integer/categorical
// problem: 0.997 of Optuna's hypervolume at 50 trials, 1.000 uniform). With
// `group`, the
// space is decomposed into groups of parameters that exist together (same
// `when` condition), each with its own multivariate estimator; the
// candidates compete on the unconditional group's score, and a conditional
// group's values come from its own best-scored draw (Optuna also picks each
// group's best on its own), so that no choice is favoured for activating
// more groups. The veto sees each candidate with those best draws and, where
// it refuses them, with the candidate's own.
// bfhpo's defaults differ from Optuna in nine measured ways (numbers in
// README.md, Benchmarks), each switchable back, all at once with
// {"preset": "optuna"} (`optuna31_tpe_options()`), which is Optuna 3.1's
// algorithm exactly, and with several objectives Optuna 5's TPESampler()
// with Optuna 3.1's kernels. With one objective:
// - the startup trials form a Latin hypercube (Optuna: independent uniform
//   draws);
// - the sampler plans for the study's budget (`budget_aware`, n_trials): a
//   study of fewer than 100 trials starts TPE sooner (n_trials / 10 startup
//   trials, at least 4, at most n_startup_trials) and narrows the good
//   trials' kernels sooner (the clip below counts sqrt(100 / n_trials) times
//   more trials); from 100 trials on, nothing changes;
// - the below group is the best 15% of the finished trials, at most 25
//   (Optuna: 10%), so the improvement weights below have more than one or
//   two good trials to weigh early on;
// - the kernels are true densities (tpe::ParzenOptions::optuna31_kernel_scale);
// - the multivariate bandwidth follows the observations' spread
//   (tpe::ParzenOptions), and with it the below estimator's magic clip counts
//   a quarter of the group's finished trials instead of its own few kernels,
//   so its kernels can narrow as the study goes on (range / 26 at 100 trials,
//   where Optuna's clip stays at range / 12), and the above estimator's
//   kernels are 0.85 of that rule's width, so g(x) keeps sharper track of
//   where the poor trials lie;
// - with those widths, discrete parameters (`discrete_widths`): a stepped
//   dimension's kernels are at least half a step wide, so that when the good
//   trials all agree on a value (e.g. a dropout at its bound) the values
//   next to it stay in reach; and in a space with a categorical parameter
//   the above kernels are 0.7 of the rule's width (0.85 otherwise), which
//   there lets the good region's own poor trials push harder (measured on
//   bench's hpo_mixed; the continuous problems' proposals do not change);
// - in a space with a categorical parameter the prior kernel weighs twice
//   what it weighs elsewhere (`mixed_space_prior`; with budget_aware, from
//   50 trials on, ramping up from 1 at 25): a run whose first good trials
//   all took one choice (on bench's hpo_mixed, sgd, whose floor is above the
//   optimum) more often tries the other with values of its own; a study of
//   25 trials has no room for that exploration, and while another worker's
//   trial is running the liars already spread the proposals (with 4 workers
//   the doubled prior lost), so then the prior weighs 1;
// - constant liar (the RUNNING trials of other workers join the above trials,
//   as in Optuna) weighs each running trial tpe_liar_weight(n_running), not
//   1: with several workers near the best region, full-weight liars push the
//   candidates away from it;
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

#include <optional>

namespace bfhpo::hpo {

enum class StartupDesign { LatinHypercube, Random };
enum class BelowWeights { Improvement, Optuna };
enum class LiarWeights { Batch, Optuna };

struct TpeOptions {
  int n_startup_trials = 10;
  // The study's n_trials (0: not known); read only when budget_aware.
  int n_trials = 0;
  bool budget_aware = true;
  // The below group: the best ceil(gamma_share * n) finished trials, at most 25.
  double gamma_share = 0.15;
  // None: a Latin hypercube with one objective, uniform draws with several.
  std::optional<StartupDesign> startup;
  bool bandwidth_from_spread = true;  // and the clip and above width that go with it, see above
  BelowWeights below_weights = BelowWeights::Improvement;
  int n_ei_candidates = 24;
  bool multivariate = true;
  bool group = true;
  bool constant_liar = true;
  LiarWeights liar_weights = LiarWeights::Batch;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  double prior_weight = 1.0;
  bool optuna31_kernel_scale = false;  // see tpe::ParzenOptions
  bool discrete_widths = true;         // see above; read only with bandwidth_from_spread and multivariate
  bool mixed_space_prior = true;       // see above
  // With several objectives, the below group: the best ceil(share * n) finished trials.
  double gamma_share_multi_objective = 0.2;
};

// Optuna 3.1's TPESampler(multivariate=True, group=True, constant_liar=True);
// with several objectives, Optuna 5's TPESampler().
TpeOptions optuna31_tpe_options();

// bfhpo's weight of each RUNNING trial in the above estimator, where a
// finished trial weighs 1: 1 / (1 + n_running), so however many workers ask
// at once, their running trials together weigh less than one finished trial.
double tpe_liar_weight(int n_running);

// Optuna's default gamma (share 0.1; bfhpo's default share is 0.15) and weights.
int tpe_gamma(int n, double share = 0.1);
// With several objectives: ceil(share * n), no cap (Optuna 5's share is 0.1).
int tpe_gamma_multi_objective(int n, double share);
Eigen::ArrayXd tpe_default_weights(int n);
// bfhpo's below weights: threshold - value per trial (values signed so that
// smaller is better), floored at 1e-12 of the largest and scaled to mean 1;
// all equal when no value improves on the threshold.
Eigen::ArrayXd tpe_improvement_weights(const Eigen::ArrayXd& values, double threshold);

// The number of startup trials: n_startup_trials, or with budget_aware and a
// known n_trials, round(n_trials / 10) kept within [min(4, n_startup_trials), n_startup_trials].
int tpe_startup_count(const TpeOptions& options);
// bfhpo's bandwidth rule: the share of the group's finished trials that the
// below estimator's magic clip counts, 0.25, times sqrt(100 / n_trials) for a
// known budget under 100 with budget_aware.
double tpe_below_clip_share(const TpeOptions& options);
// What prior_weight is multiplied by in a space with a categorical parameter:
// with mixed_space_prior 2 (1 without), and with budget_aware and a known
// n_trials 1 at 25 trials and below, rising linearly to 2 at 50.
double tpe_mixed_space_prior_scale(const TpeOptions& options);

class TpeSampler : public Sampler {
 public:
  explicit TpeSampler(TpeOptions options = {}) : options_(options) {}
  Proposal sample(const SampleRequest& request) override;
  std::string name() const override { return "tpe"; }

 private:
  TpeOptions options_;
};

}  // namespace bfhpo::hpo
