#include "report/param_importance.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace bfhpo::report {
namespace {

// Average ranks (ties share the mean of their positions), 0-based.
std::vector<double> ranks_of(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return ranks;
}

// The bin of each trial (-1 for "absent" becomes its own bin below).
std::vector<int> bins_of(const std::vector<const hpo::FrozenTrial*>& trials, const std::string& name, bool categorical,
                         int max_bins) {
  std::vector<int> bins(trials.size(), -1);
  std::vector<size_t> present;
  std::vector<double> values;
  for (size_t i = 0; i < trials.size(); ++i) {
    const auto it = trials[i]->params.find(name);
    if (it == trials[i]->params.end()) continue;
    present.push_back(i);
    values.push_back(it->second);
  }
  const std::set<double> distinct(values.begin(), values.end());
  if (categorical || static_cast<int>(distinct.size()) <= max_bins) {
    const std::vector<double> levels(distinct.begin(), distinct.end());
    for (size_t k = 0; k < present.size(); ++k)
      bins[present[k]] = static_cast<int>(std::lower_bound(levels.begin(), levels.end(), values[k]) - levels.begin());
    return bins;
  }
  const int n_bins = std::clamp(static_cast<int>(std::lround(std::sqrt(static_cast<double>(values.size())))), 2, max_bins);
  const std::vector<double> ranks = ranks_of(values);
  for (size_t k = 0; k < present.size(); ++k)
    bins[present[k]] = std::min(n_bins - 1, static_cast<int>(ranks[k] * n_bins / static_cast<double>(values.size())));
  return bins;
}

}  // namespace

std::vector<ParamImportance> param_importances(const std::vector<hpo::FrozenTrial>& trials, int max_bins) {
  std::vector<const hpo::FrozenTrial*> complete;
  std::map<std::string, bool> names;  // name -> categorical
  for (const auto& t : trials) {
    if (t.state != hpo::TrialState::Complete || !t.value() || !std::isfinite(*t.value())) continue;
    complete.push_back(&t);
    for (const auto& [name, distribution] : t.distributions)
      names[name] = std::holds_alternative<hpo::CategoricalDistribution>(distribution);
  }
  if (complete.size() < 4) return {};
  std::vector<double> values;
  for (const auto* t : complete) values.push_back(*t->value());
  const std::vector<double> y = ranks_of(values);
  const double n = static_cast<double>(y.size());
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double total = 0.0;
  for (const double v : y) total += (v - mean) * (v - mean);

  std::vector<ParamImportance> out;
  for (const auto& [name, categorical] : names) {
    const std::vector<int> bins = bins_of(complete, name, categorical, max_bins);
    std::map<int, std::pair<double, int>> groups;  // bin -> (sum, count)
    for (size_t i = 0; i < y.size(); ++i) {
      groups[bins[i]].first += y[i];
      ++groups[bins[i]].second;
    }
    double between = 0.0;
    for (const auto& [bin, sum_count] : groups) {
      const double group_mean = sum_count.first / sum_count.second;
      between += sum_count.second * (group_mean - mean) * (group_mean - mean);
    }
    const double k = static_cast<double>(groups.size());
    ParamImportance p;
    p.name = name;
    p.bins = static_cast<int>(groups.size());
    if (k >= 2 && n > k && total > 0) {
      const double within_mean_square = (total - between) / (n - k);
      p.omega_squared = std::max(0.0, (between - (k - 1) * within_mean_square) / (total + within_mean_square));
    }
    out.push_back(p);
  }
  double sum = 0.0;
  for (const auto& p : out) sum += p.omega_squared;
  for (auto& p : out) p.importance = sum > 0 ? p.omega_squared / sum : 0.0;
  std::stable_sort(out.begin(), out.end(),
                   [](const ParamImportance& a, const ParamImportance& b) { return a.importance > b.importance; });
  return out;
}

}  // namespace bfhpo::report
