#include "hpo/tpe/truncated_normal.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::hpo::tpe {
namespace {
constexpr double kLogTiny = -745.0;  // log of the smallest positive double
constexpr double kFar = 8.5;         // Phi(-8.5) = 9.5e-18 < 2^-54
}

double gauss_mass(double a, double b) {
  // Beyond kFar on both sides each tail is below half an ulp of 1, so the
  // formula below gives exactly 1: skip the two erfc calls.
  if (a < -kFar && b > kFar) return 1.0;
  // Work in the tail where erfc keeps its precision.
  if (a > 0) return gauss_mass(-b, -a);
  const double sqrt_half = std::sqrt(0.5);
  if (b <= 0) return 0.5 * (std::erfc(-b * sqrt_half) - std::erfc(-a * sqrt_half));  // both left of 0
  return 1.0 - 0.5 * std::erfc(-a * sqrt_half) - 0.5 * std::erfc(b * sqrt_half);     // straddles 0
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
