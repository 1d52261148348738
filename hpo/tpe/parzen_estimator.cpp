#include "hpo/tpe/parzen_estimator.hpp"

#include "hpo/tpe/truncated_normal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace bfhpo::hpo::tpe {
namespace {

constexpr double kSigma0Magnitude = 0.2;
// range / standard deviation of a uniform distribution: Optuna's 0.2 * range
// is 0.2 * sqrt(12) standard deviations of observations spread uniformly.
const double kUniformSpreadFactor = std::sqrt(12.0);
constexpr double kEps = 1e-12;
constexpr double kSmallestProduct = 1e-280;  // of kernel masses, well above the subnormals

// Bandwidths from neighbour gaps (univariate TPE): the larger gap to either
// neighbour, the endpoints standing in for neighbours.
Eigen::ArrayXd neighbour_gap_sigmas(const Eigen::ArrayXd& mus, double low, double high, bool consider_endpoints) {
  const Eigen::Index n = mus.size();
  std::vector<Eigen::Index> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return mus[a] < mus[b]; });
  std::vector<double> padded{low};
  for (auto i : order) padded.push_back(mus[i]);
  padded.push_back(high);
  std::vector<double> sorted_sigmas(n);
  for (Eigen::Index i = 0; i < n; ++i)
    sorted_sigmas[i] = std::max(padded[i + 1] - padded[i], padded[i + 2] - padded[i + 1]);
  if (!consider_endpoints && padded.size() >= 4) {
    sorted_sigmas.front() = padded[2] - padded[1];
    sorted_sigmas.back() = padded[padded.size() - 2] - padded[padded.size() - 3];
  }
  Eigen::ArrayXd sigmas(n);
  for (Eigen::Index i = 0; i < n; ++i) sigmas[order[i]] = sorted_sigmas[i];
  return sigmas;
}

double standard_deviation(const Eigen::ArrayXd& x) {
  return std::sqrt((x - x.mean()).square().sum() / static_cast<double>(x.size() - 1));
}

}  // namespace

double ParzenEstimator::to_transformed(const Dim& dim, double internal) const {
  return dim.log ? std::log(internal) : internal;
}

double ParzenEstimator::from_transformed(const Dim& dim, double x) const {
  double v = dim.log ? std::exp(x) : x;
  if (dim.log && dim.integer) v = std::round(v);
  if (dim.step > 0) v = std::round((v - dim.value_low) / dim.step) * dim.step + dim.value_low;
  return std::clamp(v, dim.value_low, dim.value_high);
}

ParzenEstimator::ParzenEstimator(const std::vector<Distribution>& dims, const Eigen::ArrayXXd& observations,
                                 const Eigen::ArrayXd& weights, const ParzenOptions& options) {
  const Eigen::Index n = observations.rows();
  const Eigen::Index kernels = n + 1;  // the prior kernel is last
  const double sigma0 =
      kSigma0Magnitude * std::pow(static_cast<double>(std::max<Eigen::Index>(n, 1)), -1.0 / (dims.size() + 4));

  Eigen::ArrayXd w(kernels);
  w.head(n) = weights;
  w[n] = options.prior_weight;
  w /= w.sum();
  log_base_ = w.log();
  cumulative_weights_.resize(kernels);
  std::partial_sum(w.begin(), w.end(), cumulative_weights_.begin());
  Eigen::ArrayXd continuous_mass = Eigen::ArrayXd::Ones(kernels);
  Eigen::ArrayXd inv_sigmas(kernels);
  // The multivariate rules give all of a dimension's observations one width.
  shared_widths_ = n >= 1 && options.multivariate && std::all_of(dims.begin(), dims.end(), [](const Distribution& d) {
    if (const auto* f = std::get_if<FloatDistribution>(&d)) return !f->step;
    if (const auto* i = std::get_if<IntDistribution>(&d)) return i->log;
    return false;
  });

  if (shared_widths_) shared_scaled_mus_.resize(n, static_cast<Eigen::Index>(dims.size()));
  for (std::size_t d = 0; d < dims.size(); ++d) {
    Dim dim;
    const auto column = observations.col(static_cast<Eigen::Index>(d));
    if (const auto* c = std::get_if<CategoricalDistribution>(&dims[d])) {
      dim.categorical = true;
      const Eigen::Index k = static_cast<Eigen::Index>(c->choices.size());
      Eigen::ArrayXXd p = Eigen::ArrayXXd::Constant(kernels, k, options.prior_weight / static_cast<double>(kernels));
      for (Eigen::Index i = 0; i < n; ++i) p(i, static_cast<Eigen::Index>(column[i])) += 1.0;
      p.colwise() /= p.rowwise().sum();
      dim.choice_log_probs = p.log();
      dims_.push_back(std::move(dim));
      continue;
    }
    if (const auto* f = std::get_if<FloatDistribution>(&dims[d])) {
      dim.value_low = f->low;
      dim.value_high = f->high;
      dim.log = f->log;
      dim.step = f->step.value_or(0.0);
      dim.low = f->log ? std::log(f->low) : f->low - 0.5 * dim.step;
      dim.high = f->log ? std::log(f->high) : f->high + 0.5 * dim.step;
    } else {
      const auto& i = std::get<IntDistribution>(dims[d]);
      dim.integer = true;
      dim.value_low = static_cast<double>(i.low);
      dim.value_high = static_cast<double>(i.high);
      dim.log = i.log;
      dim.step = i.log ? 0.0 : static_cast<double>(i.step);
      dim.low = i.log ? std::log(i.low - 0.5) : i.low - 0.5 * dim.step;
      dim.high = i.log ? std::log(i.high + 0.5) : i.high + 0.5 * dim.step;
    }
    const double range = dim.high - dim.low;
    dim.mus.resize(kernels);
    for (Eigen::Index i = 0; i < n; ++i) dim.mus[i] = to_transformed(dim, column[i]);
    dim.mus[n] = 0.5 * (dim.low + dim.high);
    if (!options.multivariate)
      dim.sigmas = neighbour_gap_sigmas(dim.mus, dim.low, dim.high, options.consider_endpoints);
    else if (options.bandwidth_from_spread && n >= 2)
      dim.sigmas = Eigen::ArrayXd::Constant(kernels, options.bandwidth_scale * sigma0 * kUniformSpreadFactor *
                                                         standard_deviation(dim.mus.head(n)));
    else
      dim.sigmas = Eigen::ArrayXd::Constant(kernels, options.bandwidth_scale * sigma0 * range);
    const double clip_count = options.clip_count.value_or(static_cast<double>(kernels));
    const double min_sigma = std::max(options.consider_magic_clip ? range / std::min(100.0, 1.0 + clip_count) : kEps,
                                      options.min_bandwidth_steps * dim.step);
    dim.sigmas = dim.sigmas.max(min_sigma).min(range);
    dim.sigmas[n] = range;
    inv_sigmas = dim.sigmas.inverse();
    const auto bounds = [&](Eigen::Index k) {
      return std::pair((dim.low - dim.mus[k]) * inv_sigmas[k], (dim.high - dim.mus[k]) * inv_sigmas[k]);
    };
    if (dim.step > 0) {
      dim.log_norm.resize(kernels);
      for (Eigen::Index k = 0; k < kernels; ++k) {
        const auto [a, b] = bounds(k);
        dim.log_norm[k] = log_gauss_mass(a, b);
      }
    } else {
      if (shared_widths_) {
        dim.scaled_inv = Eigen::Array2d(std::sqrt(0.5) * inv_sigmas[0], std::sqrt(0.5) * inv_sigmas[n]);
        shared_scaled_mus_.col(static_cast<Eigen::Index>(d)) = dim.mus.head(n) * dim.scaled_inv[0];
      } else {
        dim.scaled_inv = std::sqrt(0.5) * inv_sigmas;
        dim.scaled_mus = dim.mus * dim.scaled_inv;
      }
      log_base_ -= 0.5 * std::log(2 * M_PI);
      if (!options.optuna31_kernel_scale) {
        if (n >= 1 && (dim.sigmas.head(n) == dim.sigmas[0]).all()) {  // one log for the observations' shared width
          log_base_.head(n) -= std::log(dim.sigmas[0]);
          log_base_[n] -= std::log(dim.sigmas[n]);
        } else {
          log_base_ -= dim.sigmas.log();
        }
      }
      // The kernels' masses in [low, high] divide their densities: multiplied
      // over the continuous dimensions and logged once per kernel at the end,
      // unless the product would leave the normal doubles.
      for (Eigen::Index k = 0; k < kernels; ++k) {
        const auto [a, b] = bounds(k);
        const double product = continuous_mass[k] * gauss_mass(a, b);
        if (product >= kSmallestProduct) continuous_mass[k] = product;
        else log_base_[k] -= log_gauss_mass(a, b);
      }
    }
    dims_.push_back(std::move(dim));
  }
  log_base_ -= continuous_mass.log();
}

Eigen::ArrayXXd ParzenEstimator::sample(int n, std::mt19937_64& rng) const {
  Eigen::ArrayXXd out(n, static_cast<Eigen::Index>(dims_.size()));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int row = 0; row < n; ++row) {
    const double u = uniform(rng) * cumulative_weights_[cumulative_weights_.size() - 1];
    Eigen::Index k = std::lower_bound(cumulative_weights_.begin(), cumulative_weights_.end(), u) -
                     cumulative_weights_.begin();
    k = std::min<Eigen::Index>(k, cumulative_weights_.size() - 1);
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const Dim& dim = dims_[d];
      if (dim.categorical) {
        const Eigen::ArrayXd p = dim.choice_log_probs.row(k).exp();
        std::discrete_distribution<int> pick(p.data(), p.data() + p.size());
        out(row, static_cast<Eigen::Index>(d)) = pick(rng);
      } else {
        out(row, static_cast<Eigen::Index>(d)) =
            from_transformed(dim, truncnorm_sample(dim.mus[k], dim.sigmas[k], dim.low, dim.high, rng));
      }
    }
  }
  return out;
}

Eigen::ArrayXd ParzenEstimator::log_pdf(const Eigen::ArrayXXd& points) const {
  if (shared_widths_) return log_pdf_shared_widths(points);
  // One point at a time, vectorised over the kernels: the work array stays
  // small (one entry per kernel) however many points are scored.
  const Eigen::Index n = points.rows(), kernels = log_base_.size();
  Eigen::ArrayXd out(n);
  Eigen::ArrayXd total(kernels);
  for (Eigen::Index i = 0; i < n; ++i) {
    total = log_base_;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const Dim& dim = dims_[d];
      const double x = points(i, static_cast<Eigen::Index>(d));
      if (dim.categorical) {
        total += dim.choice_log_probs.col(static_cast<Eigen::Index>(x));
        continue;
      }
      const double tx = to_transformed(dim, x);
      if (dim.step == 0) {
        total -= (tx * dim.scaled_inv - dim.scaled_mus).square();
      } else {
        for (Eigen::Index k = 0; k < kernels; ++k)
          total[k] += log_gauss_mass((tx - 0.5 * dim.step - dim.mus[k]) / dim.sigmas[k],
                                     (tx + 0.5 * dim.step - dim.mus[k]) / dim.sigmas[k]) -
                      dim.log_norm[k];
      }
    }
    const double max = total.maxCoeff();
    out[i] = max + std::log((total - max).exp().sum());
  }
  return out;
}

Eigen::ArrayXd ParzenEstimator::log_pdf_shared_widths(const Eigen::ArrayXXd& points) const {
  // The same terms as log_pdf's: each kernel's total starts at its log_base_
  // and loses one square per dimension, in dimension order. The observations'
  // kernels share one scaled_inv per dimension, so the scaled point is the
  // same for all of them, and a block of points goes through the kernels
  // together, their totals in registers; the log-sum-exp runs over the block
  // too (a running maximum, then the exponentials of a kernel's row).
  constexpr Eigen::Index kBlock = 8;
  using Block = Eigen::Array<double, kBlock, 1>;
  const Eigen::Index n = points.rows(), n_dims = static_cast<Eigen::Index>(dims_.size());
  const Eigen::Index kernels = log_base_.size(), prior = kernels - 1;
  Eigen::ArrayXd out(n);
  Eigen::Array<double, kBlock, Eigen::Dynamic> scaled(kBlock, n_dims);  // point in block x dimension
  Eigen::Array<double, Eigen::Dynamic, kBlock, Eigen::RowMajor> totals(kernels, kBlock);  // kernel x point in block
  for (Eigen::Index first = 0; first < n; first += kBlock) {
    const Eigen::Index size = std::min(kBlock, n - first);
    scaled.setZero();  // rows past the last point are computed and dropped
    for (Eigen::Index d = 0; d < n_dims; ++d) {
      const Dim& dim = dims_[static_cast<std::size_t>(d)];
      for (Eigen::Index p = 0; p < size; ++p) scaled(p, d) = to_transformed(dim, points(first + p, d)) * dim.scaled_inv[0];
    }
    Block max = Block::Constant(-std::numeric_limits<double>::infinity());
    for (Eigen::Index k = 0; k < prior; ++k) {
      const double* mus = shared_scaled_mus_.row(k).data();
      Block sum = Block::Constant(log_base_[k]);
      for (Eigen::Index d = 0; d < n_dims; ++d) {
        const Block z = scaled.col(d) - mus[d];
        sum -= z * z;
      }
      totals.row(k) = sum.transpose();
      max = max.max(sum);
    }
    for (Eigen::Index p = 0; p < kBlock; ++p) {  // rows past the last point keep the base and are dropped
      double sum = log_base_[prior];
      for (Eigen::Index d = 0; p < size && d < n_dims; ++d) {
        const Dim& dim = dims_[static_cast<std::size_t>(d)];
        const double z = to_transformed(dim, points(first + p, d)) * dim.scaled_inv[1] - dim.mus[prior] * dim.scaled_inv[1];
        sum -= z * z;
      }
      totals(prior, p) = sum;
      max[p] = std::max(max[p], sum);
    }
    Block exp_sum = Block::Zero();
    for (Eigen::Index k = 0; k < kernels; ++k) exp_sum += (totals.row(k).transpose() - max).exp();
    out.segment(first, size) = (max + exp_sum.log()).head(size);
  }
  return out;
}

}  // namespace bfhpo::hpo::tpe
