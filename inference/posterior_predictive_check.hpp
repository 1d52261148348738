// Does the model describe the data? A posterior predictive check per item
// (Gelman, Meng & Stern 1996; for IRT, Sinharay, Johnson & Stern 2006).
//
// Replication r = 0..R-1 takes every item's posterior draw number
// floor(r n / R) (n the draws per item), then each person's ability from
// its conditional posterior given those item parameters and the person's
// observed responses (prior N(0, 1), the simulator's; a node of the grid of
// kAbilityGridPoints abilities over [-6, 6], drawn with its posterior mass),
// then a replicated response matrix from the model with the observed
// missing cells (a cell's category from one uniform of a splitmix64 stream:
// the categories whose exceedance probabilities lie above it). Abilities
// from the posterior rather than the prior make the replications
// p(y_rep | y), the posterior predictive distribution proper; its tail
// probabilities are conservative (closer to 0.5 than uniform when the model
// fits), so a flag is a strong signal.
//
// Per item, on the observed and on every replicated matrix (r_pj the response
// scaled to [0, 1], y / (K - 1); rest_pj the mean r over the other items
// person p answered; only persons who answered item j, and for the rest
// statistics at least one other item):
//   p<k>         the share of answers in category k, k = 0..K-1;
//   item_rest_r  Pearson's correlation of r_pj with rest_pj (discrimination);
//   low_mean     mean r_pj of the persons whose rest score is below the
//                rest scores' lower tertile (strictly; ties at it, to 1e-9,
//                the rounding of equal rest scores, left out):
//                guessing raises it above what a 2PL replicates;
//   high_mean    the same above the upper tertile: slipping lowers it;
//   pair_r_sd    the sd of the item's correlations (of r) with each other
//                item, over the persons who answered both: a second
//                dimension makes them high within its items and low across,
//                where one ability spreads them only by discrimination.
// A statistic that is undefined on a matrix (no variance, an empty group) is
// NaN there; NaN replications are left out, and a NaN observed value has no
// tail probability (NaN) and flags nothing.
// Tail probability (two-sided): min(1, 2 min(#{rep >= obs} + 1, #{rep <= obs} + 1) / (R' + 1)),
// R' the defined replications: the +1 keeps it above 0 with finitely many
// replications (the smallest is 2 / (R' + 1)).
// An item misfits when its smallest tail probability is below alpha / m,
// m its number of statistics (Bonferroni within the item): alpha bounds
// each item's chance of a false flag, so about alpha x J items are flagged
// by chance when the model fits (fewer: the tail probabilities are
// conservative). With R replications, alpha / m must be above 2 / (R + 1)
// for any flag to be possible: check_options_valid says so.
//
// Deterministic: the same draws, data and seed give the same check, on any
// number of cores (the replications run in chunks of their own seeds, the
// chunks spread over the cores).
#pragma once

#include "inference/ability_grid.hpp"
#include "models/simulators/item_response_model.hpp"
#include "inference/grid_ability_posterior.hpp"
#include "inference/posterior_inference.hpp"
#include "inference/response_matrix.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct PredictiveCheckOptions {
  int64_t replications = 500;
  double alpha = 0.05;  // each item's false-flag rate when the model fits (at most)
  uint64_t seed = 1;
};

// The replications when the user gives none: PredictiveCheckOptions' 500,
// or the fewest that let an item with `statistics_per_item` statistics be
// flagged at `alpha` where 500 cannot (2 / (R + 1) below alpha / m: a graded
// model of 9 or more categories at 0.05); 500 when alpha is not in (0, 1),
// for check_options_valid to refuse.
int64_t default_replications(int64_t statistics_per_item, double alpha);

// A UserError naming `what` (e.g. "bfhpo infer: --check-alpha") when the
// replications are fewer than 2, alpha is not in (0, 1), or no flag is
// possible for an item with `statistics_per_item` statistics.
void check_options_valid(const PredictiveCheckOptions& options, int64_t statistics_per_item, const std::string& what);

// The names of the statistics above for K categories: p0..p{K-1}, item_rest_r, low_mean, high_mean,
// pair_r_sd.
std::vector<std::string> item_statistic_names(int64_t n_categories);

// The statistics of one matrix: [S, J] in item_statistic_names' order,
// float64; responses and mask [P, J] as ResponseMatrix holds them. Of R
// matrices that share the mask, responses [R, P, J]: [R, S, J], each as
// alone (the check's replications in one call).
torch::Tensor item_statistics(const torch::Tensor& responses, const torch::Tensor& mask, int64_t n_categories);

// The two-sided tail probability above of `observed` among `replicated`.
double tail_probability(double observed, const std::vector<double>& replicated);

struct ItemStatisticCheck {
  std::string statistic;
  double observed = 0.0;
  double replicated_mean = 0.0, replicated_q025 = 0.0, replicated_q975 = 0.0;
  double tail_probability = 0.0;  // NaN when the observed value is undefined
};

struct ItemCheck {
  std::string item;
  std::vector<ItemStatisticCheck> statistics;
  bool misfit = false;
  // The statistic with the smallest tail probability (the first when several).
  const ItemStatisticCheck& worst() const;
};

struct PredictiveCheck {
  int64_t replications = 0;
  double alpha = 0.0;
  double per_statistic_level = 0.0;  // alpha / m: a tail probability below it flags its item
  std::vector<ItemCheck> items;

  std::vector<std::string> misfitting_items() const;
  // {"replications", "alpha", "per_statistic_level", "misfitting": [names],
  //  "items": [{"item", "misfit", "statistics": {name: {"observed", "replicated_mean",
  //  "replicated_q2.5", "replicated_q97.5", "tail_probability"}}}]}; NaN as null.
  nlohmann::json to_json() const;
  // item,statistic,observed,replicated_mean,replicated_q2.5,replicated_q97.5,tail_probability,misfit
  // (NaN written as NA, R's and pandas' missing value).
  std::string to_csv() const;
  // One line per misfitting item: the worst statistic, observed vs replicated, its tail probability.
  std::vector<std::string> warnings() const;
};

// `table`: the posterior draws' grid posteriors when the caller holds them (read instead of computed).
PredictiveCheck posterior_predictive_check(const models::ItemResponseModel& model, const ResponseMatrix& data,
                                           const PosteriorDraws& posterior, const PredictiveCheckOptions& options,
                                           const DrawAbilityTable* table = nullptr);

}  // namespace bfhpo::inference
