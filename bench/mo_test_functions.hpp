// The problems of the multi-objective sampler benchmark, all objectives
// minimized: ZDT1-3 (2 objectives, 30 variables in [0, 1]), DTLZ2 (3
// objectives, 12 variables in [0, 1]) and mixed_training, a synthetic
// training space (validation error against training cost over a log float,
// two categoricals, an int, a log int and a step float). Each carries the
// fixed reference point its hypervolume is measured against: 1.1 times the
// objectives' upper bounds on the domain. bench/compare_optuna_multi_objective.py
// defines the same problems for Optuna, value for value.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace bfhpo::bench {

struct MultiObjectiveProblem {
  std::string name;
  nlohmann::json search_space;
  std::vector<double> (*f)(const hpo::Params&);  // internal values: a categorical's choice index
  std::vector<double> reference;
};

namespace mo_detail {

inline std::vector<double> unit_point(const hpo::Params& p, int n) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(p.at("x" + std::to_string(i)));
  return x;
}

inline nlohmann::json unit_box(int n) {
  nlohmann::json space = nlohmann::json::object();
  for (int i = 0; i < n; ++i) space["x" + std::to_string(i)] = {{"type", "float"}, {"low", 0.0}, {"high", 1.0}};
  return space;
}

constexpr int kZdtVariables = 30;

template <int kKind>
std::vector<double> zdt(const hpo::Params& p) {
  const std::vector<double> x = unit_point(p, kZdtVariables);
  double sum = 0.0;
  for (int i = 1; i < kZdtVariables; ++i) sum += x[i];
  const double f1 = x[0], g = 1.0 + 9.0 * sum / (kZdtVariables - 1), r = f1 / g;
  double h;
  if (kKind == 1) h = 1.0 - std::sqrt(r);
  else if (kKind == 2) h = 1.0 - r * r;
  else h = 1.0 - std::sqrt(r) - r * std::sin(10.0 * M_PI * f1);
  return {f1, g * h};
}

constexpr int kDtlzObjectives = 3, kDtlzVariables = 12;

inline std::vector<double> dtlz2(const hpo::Params& p) {
  const std::vector<double> x = unit_point(p, kDtlzVariables);
  double g = 0.0;
  for (int i = kDtlzObjectives - 1; i < kDtlzVariables; ++i) g += (x[i] - 0.5) * (x[i] - 0.5);
  std::vector<double> f;
  for (int i = 0; i < kDtlzObjectives; ++i) {
    double v = 1.0 + g;
    for (int j = 0; j < kDtlzObjectives - 1 - i; ++j) v *= std::cos(x[j] * M_PI / 2);
    if (i > 0) v *= std::sin(x[kDtlzObjectives - 1 - i] * M_PI / 2);
    f.push_back(v);
  }
  return f;
}

// Validation error (best at a large network, the optimizer's own learning
// rate, dropout growing with the network, batch 64) and training cost (the
// network's size over a throughput that grows with the batch).
inline std::vector<double> mixed_training(const hpo::Params& p) {
  // adam, rmsprop, sgd: best log10 lr, error offset, cost factor
  static const double optimizers[3][3] = {{-3.0, 0.0, 1.1}, {-3.5, 0.02, 1.05}, {-1.5, 0.08, 1.0}};
  static const double batch_sizes[5] = {16, 32, 64, 128, 256};
  const double* optimizer = optimizers[static_cast<int>(p.at("optimizer"))];
  const double batch = batch_sizes[static_cast<int>(p.at("batch_size"))];
  const double size = p.at("n_layers") * p.at("width");
  const double error = 0.3 * std::pow(std::log10(p.at("lr")) - optimizer[0], 2) + optimizer[1] +
                       1.0 / std::sqrt(size / 16.0) +
                       std::pow(p.at("dropout") - 0.4 * std::log2(size / 16.0) / 9.0, 2) +
                       0.02 * std::pow(std::log2(batch) - 6.0, 2);
  const double cost = optimizer[2] * size / 8192.0 * (0.5 + 32.0 / batch);
  return {error, cost};
}

}  // namespace mo_detail

inline const std::vector<MultiObjectiveProblem>& multi_objective_problems() {
  using namespace mo_detail;
  static const std::vector<MultiObjectiveProblem> all{
      {"zdt1", unit_box(kZdtVariables), zdt<1>, {1.1, 11.0}},
      {"zdt2", unit_box(kZdtVariables), zdt<2>, {1.1, 11.0}},
      {"zdt3", unit_box(kZdtVariables), zdt<3>, {1.1, 11.0}},
      {"dtlz2", unit_box(kDtlzVariables), dtlz2, {3.85, 3.85, 3.85}},
      {"mixed_training",
       {{"lr", {{"type", "float"}, {"low", 1e-5}, {"high", 1e-1}, {"log", true}}},
        {"optimizer", {{"type", "categorical"}, {"choices", {"adam", "rmsprop", "sgd"}}}},
        {"n_layers", {{"type", "int"}, {"low", 1}, {"high", 8}}},
        {"width", {{"type", "int"}, {"low", 16}, {"high", 1024}, {"log", true}}},
        {"batch_size", {{"type", "categorical"}, {"choices", {16, 32, 64, 128, 256}}}},
        {"dropout", {{"type", "float"}, {"low", 0.0}, {"high", 0.5}, {"step", 0.05}}}},
       mixed_training,
       {5.6, 3.025}},
  };
  return all;
}

}  // namespace bfhpo::bench
