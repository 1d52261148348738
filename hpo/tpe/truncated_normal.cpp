#include "hpo/tpe/truncated_normal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace bfhpo::hpo::tpe {
namespace {
constexpr double kLogTiny = -745.0;  // log of the smallest positive double
constexpr double kFar = 8.5;         // Phi(-8.5) = 9.5e-18 < 2^-54

// Phi(-x) = 0.5 erfc(x / sqrt 2) for 0 <= x <= kFar, from its Taylor
// expansion at the nearest node x0 = j / kNodesPerUnit:
//   Phi(-x0 - t) = Phi(-x0) - phi(x0) t sum_n He_n(x0) (-t)^n / (n + 1)!
// (the derivatives of phi are (-1)^n He_n phi, He the probabilists' Hermite
// polynomials). With |t| <= 1/64 the first term left out, order 9, is below
// 1e-18, so each value is within an ulp or two of 1 of the erfc formula's,
// at a fraction of the cost of two erfc calls (the kernels' masses are most
// of the work of fitting an estimator to a thousand trials).
constexpr int kNodesPerUnit = 64;
constexpr int kOrder = 6;  // terms n = 0 .. kOrder - 1
struct TailNode {
  double tail;                            // Phi(-x0)
  std::array<double, kOrder> derivative;  // phi(x0) He_n(x0) / (n + 1)!
};

const std::vector<TailNode>& tail_nodes() {
  static const std::vector<TailNode> nodes = [] {
    std::vector<TailNode> built(static_cast<std::size_t>(kFar * kNodesPerUnit) + 1);
    for (std::size_t j = 0; j < built.size(); ++j) {
      const double x0 = static_cast<double>(j) / kNodesPerUnit;
      const double phi = std::exp(-0.5 * x0 * x0) / std::sqrt(2 * M_PI);
      built[j].tail = 0.5 * std::erfc(x0 * std::sqrt(0.5));
      double he_previous = 0.0, he = 1.0, factorial = 1.0;  // He_{n-1}, He_n, (n + 1)!
      for (int n = 0; n < kOrder; ++n) {
        built[j].derivative[n] = phi * he / factorial;
        const double he_next = x0 * he - n * he_previous;
        he_previous = he;
        he = he_next;
        factorial *= n + 2;
      }
    }
    return built;
  }();
  return nodes;
}

double normal_tail(const std::vector<TailNode>& nodes, double x) {
  const auto j = static_cast<std::size_t>(x * kNodesPerUnit + 0.5);
  const TailNode& node = nodes[j];
  const double t = x - static_cast<double>(j) / kNodesPerUnit;
  double sum = node.derivative[kOrder - 1];
  for (int n = kOrder - 2; n >= 0; --n) sum = node.derivative[n] - t * sum;
  return node.tail - t * sum;
}

}  // namespace

double gauss_mass(double a, double b) {
  // Beyond kFar on both sides each tail is below half an ulp of 1, so the
  // formula below gives exactly 1: skip the two erfc calls.
  if (a < -kFar && b > kFar) return 1.0;
  // Work in the tail where erfc keeps its precision.
  if (a > 0) return gauss_mass(-b, -a);
  const double sqrt_half = std::sqrt(0.5);
  if (b <= 0) return 0.5 * (std::erfc(-b * sqrt_half) - std::erfc(-a * sqrt_half));  // both left of 0
  // Straddles 0: one minus the two tails, each below 1/2. A tail beyond kFar
  // is below half an ulp of what the other leaves, so it is left out exactly.
  const auto& nodes = tail_nodes();
  const double left = a < -kFar ? 0.0 : normal_tail(nodes, -a);
  const double right = b > kFar ? 0.0 : normal_tail(nodes, b);
  return 1.0 - left - right;
}

double log_gauss_mass(double a, double b) {
  const double mass = gauss_mass(a, b);
  return mass > 0 ? std::log(mass) : kLogTiny;
}

double truncnorm_sample(double mu, double sigma, double low, double high, std::mt19937_64& rng) {
  // Rejection from the untruncated normal; TPE's bandwidths are at most the
  // range, so at least a third of the draws land in it. Uniform if unlucky.
  std::normal_distribution<double> normal(mu, sigma);
  for (int attempt = 0; attempt < 100; ++attempt) {
    double x = normal(rng);
    if (x >= low && x <= high) return x;
  }
  return std::uniform_real_distribution<double>(low, high)(rng);
}

}  // namespace bfhpo::hpo::tpe
