// TPE's Parzen estimator over one group of parameters: a weighted mixture of
// product kernels, one per observation plus the prior kernel, as in Optuna
// 3.1 (univariate: bandwidths from neighbour gaps; magic clip; truncated
// normals in the transformed space, log for log params; discretised by the
// cell mass for int and step; categorical kernels with prior_weight / (n + 1)
// smoothing). Multivariate bandwidth, per dimension, by Scott's rule
// h = n^(-1/(d+4)) * spread: Optuna takes 0.2 * range for the spread, which
// is what observations spread uniformly over the range give with the factor
// 0.2 * sqrt(12) on their standard deviation; `bandwidth_from_spread` uses
// that factor on the observations' actual standard deviation, so the kernels
// narrow in the dimensions where the observations agree and stay wide where
// they do not. `bandwidth_scale` and `clip_count` let the sampler set the
// below and above estimators' widths apart (see tpe_sampler.hpp).
#pragma once

#include "hpo/distributions.hpp"

#include <Eigen/Core>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace bfhpo::hpo::tpe {

struct ParzenOptions {
  bool multivariate = true;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  double prior_weight = 1.0;
  // Multivariate: the bandwidth from the observations' standard deviation
  // (false: from the range, Optuna's rule). Needs two observations; with fewer
  // the range is used.
  bool bandwidth_from_spread = true;
  // Multiplies the multivariate bandwidth (before the clip).
  double bandwidth_scale = 1.0;
  // The magic clip floors every bandwidth at range / min(100, 1 + count),
  // count being this estimator's kernels (Optuna) unless set here.
  std::optional<double> clip_count;
  // A discretised dimension's bandwidth (a step, or an int on a linear
  // scale) is at least this many of its steps (0: the clip alone, Optuna's).
  double min_bandwidth_steps = 0.0;
  // Optuna 3.1's kernel density leaves out the -log(sigma) term of each
  // continuous kernel, which favours wide kernels (the prior) in both l(x)
  // and g(x); off (the default) is the true mixture density, under which a
  // narrow kernel around a good observation weighs what its mass says.
  bool optuna31_kernel_scale = false;
};

class ParzenEstimator {
 public:
  // observations(i, d): internal value of dimension d in observation i;
  // weights: one per observation (the weights ramp).
  ParzenEstimator(const std::vector<Distribution>& dims, const Eigen::ArrayXXd& observations,
                  const Eigen::ArrayXd& weights, const ParzenOptions& options);

  // n draws, one per row, internal values.
  Eigen::ArrayXXd sample(int n, std::mt19937_64& rng) const;
  // log density of each row of `points` (internal values).
  Eigen::ArrayXd log_pdf(const Eigen::ArrayXXd& points) const;

 private:
  struct Dim {
    bool categorical = false;
    bool log = false;
    bool integer = false;
    double step = 0;          // 0: continuous
    double low = 0, high = 0;  // transformed, widened by step / 2 when discrete
    double value_low = 0, value_high = 0;
    Eigen::ArrayXd mus, sigmas;  // per kernel
    Eigen::ArrayXd log_norm;     // per kernel, discretised dimensions: log of its mass in [low, high]
    // Continuous kernels: -0.5 z^2 = -(x * scaled_inv - scaled_mus)^2, per
    // kernel; with shared_widths_, scaled_inv holds the observations' value
    // and the prior's, and the scaled means are in shared_scaled_mus_.
    Eigen::ArrayXd scaled_inv, scaled_mus;
    Eigen::ArrayXXd choice_log_probs;      // kernels x choices
  };
  double to_transformed(const Dim& dim, double internal) const;
  double from_transformed(const Dim& dim, double transformed) const;
  // log_pdf where shared_widths_, the same values computed in blocks of points.
  Eigen::ArrayXd log_pdf_shared_widths(const Eigen::ArrayXXd& points) const;

  std::vector<Dim> dims_;
  // Per kernel: the log of its normalised weight plus the constant terms of
  // its continuous (not discretised) dimensions.
  Eigen::ArrayXd log_base_;
  Eigen::ArrayXd cumulative_weights_;
  // Every dimension continuous and multivariate bandwidths, so that in each
  // dimension the observations' kernels share one width.
  bool shared_widths_ = false;
  // With shared_widths_: observation kernel x dimension, mus * scaled_inv[0],
  // a kernel's means side by side; the prior kernel's is formed where used.
  Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> shared_scaled_mus_;
};

}  // namespace bfhpo::hpo::tpe
