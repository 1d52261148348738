// The problems of the sampler-quality benchmark: six standard test functions
// in 5-D on their usual domains, each with its global minimum 0
// (Styblinski-Tang shifted), and hpo_mixed, a synthetic HPO-like space with a
// conditional parameter (bench/compare_optuna.py defines the same problems for
// Optuna, value for value).
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace bfhpo::bench {

struct TestProblem {
  std::string name;
  nlohmann::json search_space;
  double (*f)(const hpo::Params&);  // internal values: a categorical's choice index
};

namespace detail {

constexpr int kDims = 5;

inline std::vector<double> point(const hpo::Params& p) {
  std::vector<double> x;
  for (int d = 0; d < kDims; ++d) x.push_back(p.at("x" + std::to_string(d)));
  return x;
}

inline nlohmann::json box(double low, double high) {
  nlohmann::json space = nlohmann::json::object();
  for (int d = 0; d < kDims; ++d) space["x" + std::to_string(d)] = {{"type", "float"}, {"low", low}, {"high", high}};
  return space;
}

// Minimum 0 at adam, lr 1e-3, 3 layers of 512 units, dropout 0.2, weight decay 1e-4.
inline double hpo_mixed(const hpo::Params& p) {
  const double lr = p.at("lr"), n_layers = p.at("n_layers"), width = p.at("width");
  double lr_term, optimizer_term;
  if (p.at("optimizer") == 0) {  // adam
    lr_term = 0.5 * std::pow(std::log10(lr) + 3.0, 2);
    optimizer_term = 0.0;
  } else {  // sgd: the effective step lr / (1 - momentum) matters, best at 0.1; momentum near 0.9 a little better
    const double momentum = p.at("momentum");
    lr_term = 0.5 * std::pow(std::log10(lr / (1.0 - momentum)) + 1.0, 2);
    optimizer_term = 0.05 + 0.5 * std::pow(momentum - 0.9, 2);
  }
  const double width_term = 0.1 * std::pow(std::log2(width) - (6 + n_layers), 2);
  const double depth_term = 0.05 * std::pow(n_layers - 3, 2);
  const double dropout_term = 2.0 * std::pow(p.at("dropout") - 0.1 - 0.05 * (n_layers - 1), 2);
  const double decay_term = 0.05 * std::pow(std::log10(p.at("weight_decay")) + 4.0, 2);
  return lr_term + optimizer_term + width_term + depth_term + dropout_term + decay_term;
}

}  // namespace detail

inline const std::vector<TestProblem>& test_problems() {
  using detail::box;
  using detail::point;
  static const std::vector<TestProblem> all{
      {"sphere", box(-5.12, 5.12), [](const hpo::Params& p) {
         double s = 0; for (double v : point(p)) s += v * v; return s; }},
      {"rosenbrock", box(-5.0, 10.0), [](const hpo::Params& p) {
         const auto x = point(p);
         double s = 0;
         for (std::size_t i = 0; i + 1 < x.size(); ++i)
           s += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
         return s; }},
      {"rastrigin", box(-5.12, 5.12), [](const hpo::Params& p) {
         double s = 10.0 * detail::kDims;
         for (double v : point(p)) s += v * v - 10 * std::cos(2 * M_PI * v);
         return s; }},
      {"styblinski_tang", box(-5.0, 5.0), [](const hpo::Params& p) {
         double s = 0;
         for (double v : point(p)) s += 0.5 * (std::pow(v, 4) - 16 * v * v + 5 * v) + 39.16616570377142;
         return s; }},
      {"ackley", box(-32.768, 32.768), [](const hpo::Params& p) {
         double sq = 0, cs = 0, n = detail::kDims;
         for (double v : point(p)) { sq += v * v; cs += std::cos(2 * M_PI * v); }
         return -20 * std::exp(-0.2 * std::sqrt(sq / n)) - std::exp(cs / n) + 20 + M_E; }},
      {"levy", box(-10.0, 10.0), [](const hpo::Params& p) {
         const auto x = point(p);
         auto w = [](double v) { return 1 + (v - 1) / 4; };
         double s = std::pow(std::sin(M_PI * w(x[0])), 2);
         for (std::size_t i = 0; i + 1 < x.size(); ++i)
           s += std::pow(w(x[i]) - 1, 2) * (1 + 10 * std::pow(std::sin(M_PI * w(x[i]) + 1), 2));
         double wd = w(x.back());
         return s + std::pow(wd - 1, 2) * (1 + std::pow(std::sin(2 * M_PI * wd), 2)); }},
      {"hpo_mixed",
       {{"lr", {{"type", "float"}, {"low", 1e-5}, {"high", 1e-1}, {"log", true}}},
        {"optimizer", {{"type", "categorical"}, {"choices", {"adam", "sgd"}}}},
        {"momentum", {{"type", "float"}, {"low", 0.0}, {"high", 0.99}, {"when", {{"optimizer", "sgd"}}}}},
        {"n_layers", {{"type", "int"}, {"low", 1}, {"high", 5}}},
        {"width", {{"type", "int"}, {"low", 16}, {"high", 1024}, {"log", true}}},
        {"dropout", {{"type", "float"}, {"low", 0.0}, {"high", 0.5}, {"step", 0.05}}},
        {"weight_decay", {{"type", "float"}, {"low", 1e-6}, {"high", 1e-2}, {"log", true}}}},
       detail::hpo_mixed},
  };
  return all;
}

}  // namespace bfhpo::bench
