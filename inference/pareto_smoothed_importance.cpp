#include "inference/pareto_smoothed_importance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace bfhpo::inference {
namespace {

// The generalized Pareto quantile function at probability p.
double pareto_quantile(double p, double shape, double scale) {
  if (std::abs(shape) < 1e-12) return -scale * std::log1p(-p);
  return scale * std::expm1(-shape * std::log1p(-p)) / shape;
}

}  // namespace

double pareto_k_threshold(int64_t draws) {
  return std::min(1.0 - 1.0 / std::log10(static_cast<double>(draws)), 0.7);
}

bool ParetoSmoothedWeights::reliable() const {
  return pareto_k < pareto_k_threshold(static_cast<int64_t>(weights.size()));
}

double generalized_pareto_shape(std::vector<double> x, double* scale) {
  const auto n = static_cast<int64_t>(x.size());
  if (n < 5) throw std::invalid_argument("generalized_pareto_shape: needs at least 5 exceedances");
  std::sort(x.begin(), x.end());
  constexpr double kPrior = 3.0;
  const int64_t grid = 30 + static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  const double first_quartile = x[static_cast<size_t>(std::floor(static_cast<double>(n) / 4.0 + 0.5)) - 1];
  // A quarter of the exceedances 0: a few draws hold all the weight, no tail to fit.
  if (!(first_quartile > 0.0)) return std::numeric_limits<double>::infinity();
  std::vector<double> theta(grid), log_likelihood(grid);
  for (int64_t i = 0; i < grid; ++i) {
    theta[i] = 1.0 / x.back() +
               (1.0 - std::sqrt(static_cast<double>(grid) / (static_cast<double>(i + 1) - 0.5))) / kPrior /
                   first_quartile;
    double k = 0.0;
    for (double value : x) k += std::log1p(-theta[i] * value);
    k /= static_cast<double>(n);
    log_likelihood[i] = static_cast<double>(n) * (std::log(-theta[i] / k) - k - 1.0);
  }
  const double top = *std::max_element(log_likelihood.begin(), log_likelihood.end());
  double weight_sum = 0.0, theta_hat = 0.0;
  for (int64_t i = 0; i < grid; ++i) {
    const double w = std::isfinite(log_likelihood[i]) ? std::exp(log_likelihood[i] - top) : 0.0;
    weight_sum += w;
    theta_hat += w * theta[i];
  }
  theta_hat /= weight_sum;
  double k = 0.0;
  for (double value : x) k += std::log1p(-theta_hat * value);
  k /= static_cast<double>(n);
  if (scale) *scale = -k / theta_hat;
  constexpr double kPseudoObservations = 10.0;
  return (k * static_cast<double>(n) + 0.5 * kPseudoObservations) / (static_cast<double>(n) + kPseudoObservations);
}

ParetoSmoothedWeights pareto_smooth(const std::vector<double>& log_ratios) {
  const auto draws = static_cast<int64_t>(log_ratios.size());
  if (draws < kFewestSmoothedDraws)
    throw std::invalid_argument("pareto_smooth: needs at least " + std::to_string(kFewestSmoothedDraws) + " draws");
  const double top = *std::max_element(log_ratios.begin(), log_ratios.end());
  if (!std::isfinite(top)) throw std::invalid_argument("pareto_smooth: every draw has ratio 0 or a NaN");
  std::vector<double> ratios(draws);
  for (int64_t s = 0; s < draws; ++s) ratios[s] = std::isnan(log_ratios[s]) ? 0.0 : std::exp(log_ratios[s] - top);

  const double s = static_cast<double>(draws);
  const auto tail = static_cast<int64_t>(std::ceil(std::min(0.2 * s, 3.0 * std::sqrt(s))));
  std::vector<int64_t> order(draws);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ratios[a] < ratios[b]; });
  const double cutoff = ratios[order[draws - tail - 1]];

  ParetoSmoothedWeights result;
  std::vector<double> exceedances;
  for (int64_t i = draws - tail; i < draws; ++i) exceedances.push_back(ratios[order[i]] - cutoff);
  if (exceedances.back() > exceedances.front()) {
    double scale = 0.0;
    result.pareto_k = generalized_pareto_shape(exceedances, &scale);
    if (std::isfinite(result.pareto_k))
      for (int64_t i = 0; i < tail; ++i) {
        const double p = (static_cast<double>(i) + 0.5) / static_cast<double>(tail);
        ratios[order[draws - tail + i]] = std::min(cutoff + pareto_quantile(p, result.pareto_k, scale), 1.0);
      }
  } else {
    // The largest ratios are all equal: the ratios are bounded, lighter-tailed than any Pareto.
    result.pareto_k = -std::numeric_limits<double>::infinity();
  }
  const double total = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  result.weights.resize(draws);
  double squares = 0.0;
  for (int64_t i = 0; i < draws; ++i) {
    result.weights[i] = ratios[i] / total;
    squares += result.weights[i] * result.weights[i];
  }
  result.effective_sample_size = 1.0 / squares;
  return result;
}

std::vector<int64_t> systematic_resample(const std::vector<double>& weights, int64_t n, double uniform) {
  std::vector<int64_t> indices;
  indices.reserve(n);
  double cumulative = weights.empty() ? 0.0 : weights[0];
  size_t i = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double point = (static_cast<double>(k) + uniform) / static_cast<double>(n);
    while (point > cumulative && i + 1 < weights.size()) cumulative += weights[++i];
    indices.push_back(static_cast<int64_t>(i));
  }
  return indices;
}

}  // namespace bfhpo::inference
