// Posterior diagnostics from posterior draws and the true parameters, per
// parameter dimension, as bayesflow.diagnostics computes them. They are what a
// trial reports besides its validation loss, and what `bfhpo` prints.
//
// Shapes: `draws` [N, S, D] holds S posterior draws for each of N simulated
// datasets (or items), `truths` [N, D] the parameters they were simulated
// from. Every metric needs N >= 2 and S >= 2 and is computed in float64 on the
// tensors' device; per-dimension results are float64 tensors [D] on that
// device. Inputs are read, never differentiated.
//
// Definitions (index n = dataset, s = draw, d = dimension):
//   fractional rank  r_nd = #{s : draw_nsd < truth_nd} / S, in [0, 1]; a
//                    strict count, so ties count as not below.
//   coverage(a)      the fraction of datasets whose truth lies in the central
//                    a-interval [q_{(1-a)/2}, q_{(1+a)/2}] of its draws, ends
//                    included, q the sample quantile with linear
//                    interpolation (numpy's default, as BayesFlow uses).
//   calibration err  median over the levels a of |coverage(a) - a|; an even
//                    number of levels averages the two middle values (numpy's
//                    median). Default levels: BayesFlow's 20 equally spaced
//                    a from 0.005 to 0.995.
//   correlation      Pearson r between the posterior mean and the truth.
//   nrmse            sqrt(mean_n (posterior mean - truth)^2) divided by the
//                    range max_n truth - min_n truth. BayesFlow normalises by
//                    the range too, but takes the median over draws of
//                    per-draw RMSEs; here the posterior mean is the estimate.
//   contraction      mean_n of 1 - posterior variance / prior variance, the
//                    posterior variance the unbiased sample variance over the
//                    draws. Not clipped to [0, 1] (BayesFlow clips and takes
//                    the median): an over-dispersed posterior shows as < 0.
//   z-score          z_nd = (posterior mean - truth) / posterior std (unbiased
//                    sample std). Calibrated posteriors give z ~ N(0, 1);
//                    over-confident ones a std above 1.
//   rank KS          the Kolmogorov-Smirnov distance sup_u |ECDF(r)(u) - u|
//                    of the ranks from U(0, 1). Ranks take only S + 1 values, so
//                    even exact posteriors give about 1 / (S + 1) or more.
// Undefined values (a constant truth or posterior mean, zero posterior
// spread) are NaN or infinite, never an exception.
//
// Shape errors and levels outside (0, 1) are bugs: std::invalid_argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace bfhpo::models {

// [N, D] fractional ranks of the truths among the draws.
torch::Tensor sbc_ranks(const torch::Tensor& draws, const torch::Tensor& truths);

// [D] Kolmogorov-Smirnov distance of ranks [N, D] from U(0, 1).
torch::Tensor rank_ks_distance(const torch::Tensor& ranks);

// [L] float64 levels: `resolution` points equally spaced in [min_level, max_level].
torch::Tensor calibration_levels(int64_t resolution = 20, double min_level = 0.005,
                                 double max_level = 0.995);

// [L, D] coverage of the central intervals at each level of `levels` [L].
torch::Tensor central_interval_coverage(const torch::Tensor& draws, const torch::Tensor& truths,
                                        const torch::Tensor& levels);

// [D] median over `levels` of |coverage - level|.
torch::Tensor calibration_error(const torch::Tensor& draws, const torch::Tensor& truths,
                                const torch::Tensor& levels);

// [D] Pearson correlation of posterior mean and truth over datasets.
torch::Tensor posterior_mean_correlation(const torch::Tensor& draws, const torch::Tensor& truths);

// [D] range-normalised RMSE of the posterior mean.
torch::Tensor normalized_rmse(const torch::Tensor& draws, const torch::Tensor& truths);

// [D] posterior contraction against `prior_variance` [D].
torch::Tensor posterior_contraction(const torch::Tensor& draws,
                                    const torch::Tensor& prior_variance);

// [N, D] posterior z-scores of the truths.
torch::Tensor posterior_z_scores(const torch::Tensor& draws, const torch::Tensor& truths);

struct DiagnosticsOptions {
  int64_t calibration_resolution = 20;
  double min_level = 0.005;
  double max_level = 0.995;
};

// All metrics of one parameter dimension.
struct ParameterDiagnostics {
  std::string name;
  double calibration_error = 0.0;
  double rank_ks = 0.0;
  double correlation = 0.0;
  double nrmse = 0.0;
  double contraction = 0.0;
  double z_mean = 0.0;  // mean of the z-scores over datasets
  double z_std = 0.0;   // unbiased std of the z-scores over datasets
};

struct Diagnostics {
  int64_t n_datasets = 0;
  int64_t n_draws = 0;
  std::vector<ParameterDiagnostics> parameters;  // one per dimension, in order

  // {"n_datasets", "n_draws", "parameters": [{"name", "calibration_error",
  // "rank_ks", "correlation", "nrmse", "contraction", "z_mean", "z_std"}]}.
  // nlohmann::json serialises NaN and infinities as null.
  nlohmann::json to_json() const;

  // Plain-text table for the CLI: a header line, then one line a parameter,
  // columns aligned, values with 4 decimals.
  std::string table() const;
};

// What the diagnostics plots draw (`bfhpo report`): per dimension and per
// dataset the posterior mean and std over the draws, the truth and the rank
// count #{s : draw < truth} in 0..S, with the prior variance, so a reader
// recomputes ranks, recovery, z-scores and contraction without the draws.
struct PosteriorItems {
  int64_t n_draws = 0;
  struct Parameter {
    std::string name;
    double prior_variance = 0.0;
    std::vector<double> mean, std, truth;  // [N] each
    std::vector<int64_t> rank;             // [N], 0..n_draws
  };
  std::vector<Parameter> parameters;

  // {"n_draws", "parameters": [{"name", "prior_variance", "mean", "std", "truth",
  // "rank"}]}, the reals rounded to 4 significant digits (a plot needs no more).
  nlohmann::json to_json() const;
};

PosteriorItems posterior_items(const torch::Tensor& draws, const torch::Tensor& truths,
                               const torch::Tensor& prior_variance, const std::vector<std::string>& names);

// Every metric for every dimension; `names` has one name a dimension.
Diagnostics compute_diagnostics(const torch::Tensor& draws, const torch::Tensor& truths,
                                const torch::Tensor& prior_variance,
                                const std::vector<std::string>& names,
                                const DiagnosticsOptions& options = {});

}  // namespace bfhpo::models
