// The truncated normal distributions of TPE's kernels, in log space where it
// matters: the log of the standard normal mass between two points, the log
// density of a normal truncated to [low, high], and sampling from it.
#pragma once

#include <random>

namespace bfhpo::hpo::tpe {

// Phi(b) - Phi(a) for a <= b, accurate in both tails (computed there, where
// erfc keeps its precision); exactly 1 beyond 8.5 on both sides. For a <= 0
// < b, one minus the two tails, each from a table of Taylor expansions:
// within 2.5e-16 of the exact mass, as the erfc formula is.
double gauss_mass(double a, double b);
// log(gauss_mass(a, b)), and the log of the smallest positive double where the mass rounds to 0.
double log_gauss_mass(double a, double b);
// A draw from N(mu, sigma) truncated to [low, high].
double truncnorm_sample(double mu, double sigma, double low, double high, std::mt19937_64& rng);

}  // namespace bfhpo::hpo::tpe
