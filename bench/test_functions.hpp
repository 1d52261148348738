// The six standard test functions of the sampler-quality benchmark, on the
// usual domains, each with its global minimum 0 (Styblinski-Tang shifted).
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace bfhpo::bench {

struct TestFunction {
  std::string name;
  double low, high;
  double (*f)(const std::vector<double>&);
};

inline const std::vector<TestFunction>& test_functions() {
  static const std::vector<TestFunction> all{
      {"sphere", -5.12, 5.12, [](const std::vector<double>& x) {
         double s = 0; for (double v : x) s += v * v; return s; }},
      {"rosenbrock", -5.0, 10.0, [](const std::vector<double>& x) {
         double s = 0;
         for (std::size_t i = 0; i + 1 < x.size(); ++i)
           s += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
         return s; }},
      {"rastrigin", -5.12, 5.12, [](const std::vector<double>& x) {
         double s = 10.0 * x.size();
         for (double v : x) s += v * v - 10 * std::cos(2 * M_PI * v);
         return s; }},
      {"styblinski_tang", -5.0, 5.0, [](const std::vector<double>& x) {
         double s = 0;
         for (double v : x) s += 0.5 * (std::pow(v, 4) - 16 * v * v + 5 * v) + 39.16616570377142;
         return s; }},
      {"ackley", -32.768, 32.768, [](const std::vector<double>& x) {
         double sq = 0, cs = 0, n = static_cast<double>(x.size());
         for (double v : x) { sq += v * v; cs += std::cos(2 * M_PI * v); }
         return -20 * std::exp(-0.2 * std::sqrt(sq / n)) - std::exp(cs / n) + 20 + M_E; }},
      {"levy", -10.0, 10.0, [](const std::vector<double>& x) {
         auto w = [](double v) { return 1 + (v - 1) / 4; };
         double s = std::pow(std::sin(M_PI * w(x[0])), 2);
         for (std::size_t i = 0; i + 1 < x.size(); ++i)
           s += std::pow(w(x[i]) - 1, 2) * (1 + 10 * std::pow(std::sin(M_PI * w(x[i]) + 1), 2));
         double wd = w(x.back());
         return s + std::pow(wd - 1, 2) * (1 + std::pow(std::sin(2 * M_PI * wd), 2)); }},
  };
  return all;
}

}  // namespace bfhpo::bench
