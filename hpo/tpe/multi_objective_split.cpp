#include "hpo/tpe/multi_objective_split.hpp"

#include "hpo/pareto_front.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::hpo::tpe {

std::vector<double> tpe_reference_point(const LossPoints& losses) {
  std::vector<double> reference(losses.front().size(), -INFINITY);
  for (const auto& p : losses)
    for (std::size_t i = 0; i < p.size(); ++i) reference[i] = std::max(reference[i], p[i]);
  for (double& r : reference) {
    r = std::max(1.1 * r, 0.9 * r);
    if (r == 0.0) r = 1e-12;
  }
  return reference;
}

std::vector<int> multi_objective_below(const LossPoints& losses, int n_below) {
  const std::vector<int> ranks = non_domination_ranks(losses);
  std::vector<int> count_of_rank(losses.size() + 1, 0);
  for (int r : ranks) ++count_of_rank[static_cast<std::size_t>(r)];
  int whole_ranks = 0, taken = 0;  // ranks 0 .. whole_ranks - 1 fit whole
  while (taken + count_of_rank[static_cast<std::size_t>(whole_ranks)] <= n_below &&
         count_of_rank[static_cast<std::size_t>(whole_ranks)] > 0)
    taken += count_of_rank[static_cast<std::size_t>(whole_ranks++)];

  std::vector<bool> below(losses.size(), false);
  LossPoints cut_rank;
  std::vector<int> cut_rank_index;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    if (ranks[i] < whole_ranks) below[i] = true;
    else if (ranks[i] == whole_ranks) {
      cut_rank.push_back(losses[i]);
      cut_rank_index.push_back(static_cast<int>(i));
    }
  }
  if (taken < n_below) {
    const std::vector<double> reference = tpe_reference_point(cut_rank);
    const int k = n_below - taken;
    std::vector<int> chosen(static_cast<std::size_t>(k));
    if (std::all_of(reference.begin(), reference.end(), [](double r) { return std::isfinite(r); }))
      chosen = greedy_hypervolume_subset(cut_rank, k, reference);
    else
      for (int j = 0; j < k; ++j) chosen[static_cast<std::size_t>(j)] = j;
    for (int j : chosen) below[static_cast<std::size_t>(cut_rank_index[static_cast<std::size_t>(j)])] = true;
  }
  std::vector<int> indices;
  for (std::size_t i = 0; i < below.size(); ++i)
    if (below[i]) indices.push_back(static_cast<int>(i));
  return indices;
}

Eigen::ArrayXd hypervolume_contribution_weights(const LossPoints& below) {
  const Eigen::Index n = static_cast<Eigen::Index>(below.size());
  if (n < 2) return Eigen::ArrayXd::Ones(n);
  const std::vector<double> reference = tpe_reference_point(below);
  if (!std::all_of(reference.begin(), reference.end(), [](double r) { return std::isfinite(r); }))
    return Eigen::ArrayXd::Ones(n);
  const std::vector<double> contributions = hypervolume_contributions(below, reference);
  Eigen::ArrayXd w = Eigen::Map<const Eigen::ArrayXd>(contributions.data(), n);
  const double largest = w.maxCoeff();
  if (!(largest > 0.0) || !std::isfinite(largest)) return Eigen::ArrayXd::Ones(n);
  w = w.max(1e-12 * largest);
  return w / w.mean();
}

}  // namespace bfhpo::hpo::tpe
