#include "hpo/pareto_front.hpp"

#include "hpo/study_objectives.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::hpo {

std::vector<double> loss_values(const FrozenTrial& trial, const Directions& directions) {
  if (trial.values.size() != directions.size()) return {};
  std::vector<double> losses(trial.values.size());
  for (std::size_t i = 0; i < losses.size(); ++i)
    losses[i] = directions[i] == StudyDirection::Maximize ? -trial.values[i] : trial.values[i];
  return losses;
}

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better_somewhere = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    better_somewhere = better_somewhere || a[i] < b[i];
  }
  return better_somewhere;
}

std::vector<int> non_domination_ranks(const std::vector<std::vector<double>>& losses) {
  const std::size_t n = losses.size();
  std::vector<std::vector<std::size_t>> dominated(n);  // the points each one dominates
  std::vector<int> dominator_count(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (dominates(losses[i], losses[j])) {
        dominated[i].push_back(j);
        ++dominator_count[j];
      } else if (dominates(losses[j], losses[i])) {
        dominated[j].push_back(i);
        ++dominator_count[i];
      }
    }
  std::vector<int> ranks(n, 0);
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i)
    if (dominator_count[i] == 0) current.push_back(i);
  for (int rank = 0; !current.empty(); ++rank) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      ranks[i] = rank;
      for (std::size_t j : dominated[i])
        if (--dominator_count[j] == 0) next.push_back(j);
    }
    current = std::move(next);
  }
  return ranks;
}

std::vector<FrozenTrial> pareto_front(const std::vector<FrozenTrial>& trials, const Directions& directions) {
  const bool constrained = has_constraints(trials);
  std::vector<const FrozenTrial*> candidates;
  std::vector<std::vector<double>> losses;
  for (const FrozenTrial& t : trials) {
    if (t.state != TrialState::Complete || (constrained && !is_feasible(t))) continue;
    std::vector<double> loss = loss_values(t, directions);
    if (loss.empty() || std::any_of(loss.begin(), loss.end(), [](double v) { return std::isnan(v); })) continue;
    candidates.push_back(&t);
    losses.push_back(std::move(loss));
  }
  std::vector<FrozenTrial> front;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const bool dominated = std::any_of(losses.begin(), losses.end(),
                                       [&](const std::vector<double>& other) { return dominates(other, losses[i]); });
    if (!dominated) front.push_back(*candidates[i]);
  }
  return front;
}

}  // namespace bfhpo::hpo
