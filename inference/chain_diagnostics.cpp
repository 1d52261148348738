#include "inference/chain_diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace bfhpo::inference {

torch::Tensor split_rhat(const torch::Tensor& chains) {
  const int64_t half = chains.size(1) / 2;
  if (half < 2) throw std::invalid_argument("split_rhat: needs at least 4 draws per chain");
  const auto draws = chains.to(torch::kFloat64);
  const auto sequences = torch::cat({draws.narrow(1, 0, half), draws.narrow(1, draws.size(1) - half, half)}, 0);
  const double n = static_cast<double>(half);
  const auto within = sequences.var(1).mean(0);
  const auto between_over_n = sequences.mean(1).var(0);
  return (((n - 1.0) / n * within + between_over_n) / within).sqrt();
}

torch::Tensor effective_sample_size(const torch::Tensor& chains) {
  const int64_t m = chains.size(0), n = chains.size(1);
  if (n < 4) throw std::invalid_argument("effective_sample_size: needs at least 4 draws per chain");
  const auto draws = chains.to(torch::kFloat64).reshape({m, n, -1});
  const int64_t quantities = draws.size(2);
  // Autocovariance of every chain at every lag by FFT, over the draws' axis.
  const auto centred = draws - draws.mean(1, true);
  const auto spectrum = torch::fft::rfft(centred, 2 * n, 1);
  const auto autocovariance = torch::fft::irfft(spectrum * spectrum.conj(), 2 * n, 1).narrow(1, 0, n) /
                              static_cast<double>(n);                                          // [m, n, Q]
  const auto within = (autocovariance.select(1, 0) * static_cast<double>(n) / static_cast<double>(n - 1)).mean(0);
  const auto mean_variance = m > 1 ? draws.mean(1).var(0) : torch::zeros_like(within);
  const auto variance_plus = within * static_cast<double>(n - 1) / static_cast<double>(n) + mean_variance;
  const auto rho = (1.0 - (within - autocovariance.mean(0)) / variance_plus).contiguous();  // [n, Q]
  const auto vplus_tensor = variance_plus.contiguous();
  const auto vplus = vplus_tensor.accessor<double, 1>();
  auto result = torch::empty({quantities}, torch::kFloat64);
  auto out = result.accessor<double, 1>();
  const auto r = rho.accessor<double, 2>();
  for (int64_t q = 0; q < quantities; ++q) {
    if (!(vplus[q] > 0.0)) {  // a constant quantity: every draw counts
      out[q] = static_cast<double>(m * n);
      continue;
    }
    // Geyer: sums of adjacent pairs, positive and made monotone.
    double tau = -1.0, previous_pair = std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t + 1 < n; t += 2) {
      double pair = r[t][q] + r[t + 1][q];
      if (pair < 0.0) break;
      pair = std::min(pair, previous_pair);
      previous_pair = pair;
      tau += 2.0 * pair;
    }
    out[q] = static_cast<double>(m * n) / std::max(tau, 1.0 / std::log10(static_cast<double>(m * n)));
  }
  return result.reshape(chains.sizes().slice(2));
}

}  // namespace bfhpo::inference
