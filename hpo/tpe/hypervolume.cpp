#include "hpo/tpe/hypervolume.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <queue>
#include <tuple>

namespace bfhpo::hpo::tpe {
namespace {

using Point = std::vector<double>;

bool below(const Point& p, const Point& reference) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!(p[i] < reference[i])) return false;
  return true;
}

double box_volume(const Point& p, const Point& reference) {
  double v = 1.0;
  for (std::size_t i = 0; i < p.size(); ++i) v *= reference[i] - p[i];
  return v;
}

// The points no other point weakly dominates, one of each set of equal points.
LossPoints nondominated(LossPoints points) {
  // A point can only be weakly dominated by one that sorts before it.
  std::sort(points.begin(), points.end());
  LossPoints kept;
  for (auto& p : points) {
    const bool dominated = std::any_of(kept.begin(), kept.end(), [&](const Point& q) {
      for (std::size_t i = 0; i < p.size(); ++i)
        if (q[i] > p[i]) return false;
      return true;
    });
    if (!dominated) kept.push_back(std::move(p));
  }
  return kept;
}

// The points inside the reference box, as [x, y]: sweep by x, the lowest y so far.
double hypervolume_2d(LossPoints points, const Point& reference) {
  std::sort(points.begin(), points.end());
  double volume = 0.0, lowest_y = reference[1];
  for (const auto& p : points) {
    if (p[1] >= lowest_y) continue;
    volume += (reference[0] - p[0]) * (lowest_y - p[1]);
    lowest_y = p[1];
  }
  return volume;
}

// The region of the (x, y) plane below the reference dominated by the points
// added so far, kept as its staircase: x ascending, y strictly descending.
class Staircase {
 public:
  Staircase(double reference_x, double reference_y) : reference_x_(reference_x), reference_y_(reference_y) {}

  // Adds (x, y) and returns the area it adds.
  double add(double x, double y) {
    auto it = steps_.lower_bound(x);
    double ceiling = reference_y_;  // the area from here up is covered already, left of the next step
    if (it != steps_.begin()) {
      const double left_y = std::prev(it)->second;
      if (left_y <= y) return 0.0;
      ceiling = left_y;
    }
    if (it != steps_.end() && it->first == x && it->second <= y) return 0.0;
    double added = 0.0, from_x = x;
    while (it != steps_.end() && it->second >= y) {  // steps (x, y) dominates
      added += (it->first - from_x) * (ceiling - y);
      from_x = it->first;
      ceiling = it->second;
      it = steps_.erase(it);
    }
    added += ((it == steps_.end() ? reference_x_ : it->first) - from_x) * (ceiling - y);
    steps_.emplace_hint(it, x, y);
    return added;
  }

 private:
  double reference_x_, reference_y_;
  std::map<double, double> steps_;
};

// The points inside the reference box, as [x, y, z]: sweep by z, the
// dominated area of the (x, y) projections so far times each slab's height.
double hypervolume_3d(LossPoints points, const Point& reference) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a[2] < b[2]; });
  Staircase staircase(reference[0], reference[1]);
  double volume = 0.0, area = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    area += staircase.add(points[i][0], points[i][1]);
    const double next_z = i + 1 < points.size() ? points[i + 1][2] : reference[2];
    volume += area * (next_z - points[i][2]);
  }
  return volume;
}

double hypervolume_inside(const LossPoints& points, const Point& reference);

// WFG: the sum over the points of each one's volume exclusive of the points after it.
double hypervolume_wfg(const LossPoints& points, const Point& reference) {
  LossPoints front = nondominated(points);
  // Worst last objective first: the limited sets of the early points are then small.
  std::sort(front.begin(), front.end(), [](const Point& a, const Point& b) { return a.back() > b.back(); });
  double volume = 0.0;
  LossPoints limited;
  for (std::size_t k = 0; k < front.size(); ++k) {
    limited.clear();
    for (std::size_t j = k + 1; j < front.size(); ++j) {
      Point q(front[k].size());
      for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::max(front[k][i], front[j][i]);
      limited.push_back(std::move(q));
    }
    volume += box_volume(front[k], reference) - hypervolume_inside(limited, reference);
  }
  return volume;
}

// Every point inside the reference box.
double hypervolume_inside(const LossPoints& points, const Point& reference) {
  if (points.empty()) return 0.0;
  if (points.size() == 1) return box_volume(points.front(), reference);
  switch (reference.size()) {
    case 1: {
      double lowest = points.front()[0];
      for (const auto& p : points) lowest = std::min(lowest, p[0]);
      return reference[0] - lowest;
    }
    case 2: return hypervolume_2d(points, reference);
    case 3: return hypervolume_3d(points, reference);
    default: return hypervolume_wfg(points, reference);
  }
}

// The others limited to `p`: the part of their union inside p's box.
LossPoints limited_to(const Point& p, const LossPoints& others) {
  LossPoints limited;
  limited.reserve(others.size());
  for (const auto& q : others) {
    Point m(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) m[i] = std::max(p[i], q[i]);
    limited.push_back(std::move(m));
  }
  return limited;
}

}  // namespace

double hypervolume(const LossPoints& points, const std::vector<double>& reference) {
  LossPoints inside;
  for (const auto& p : points)
    if (below(p, reference)) inside.push_back(p);
  return hypervolume_inside(inside, reference);
}

std::vector<double> hypervolume_contributions(const LossPoints& points, const std::vector<double>& reference) {
  LossPoints inside;
  std::vector<std::size_t> index_of;  // in points
  for (std::size_t i = 0; i < points.size(); ++i)
    if (below(points[i], reference)) {
      inside.push_back(points[i]);
      index_of.push_back(i);
    }
  std::vector<double> contributions(points.size(), 0.0);
  LossPoints others;
  for (std::size_t k = 0; k < inside.size(); ++k) {
    others.clear();
    for (std::size_t j = 0; j < inside.size(); ++j)
      if (j != k) others.push_back(inside[j]);
    contributions[index_of[k]] =
        box_volume(inside[k], reference) - hypervolume_inside(limited_to(inside[k], others), reference);
  }
  return contributions;
}

std::vector<int> greedy_hypervolume_subset(const LossPoints& points, int k, const std::vector<double>& reference) {
  // (gain, -index, size of the subset the gain was computed for): the top is
  // the largest gain, then the lowest index.
  using Entry = std::tuple<double, int, std::size_t>;
  std::priority_queue<Entry> bounds;
  for (std::size_t i = 0; i < points.size(); ++i)
    bounds.emplace(below(points[i], reference) ? box_volume(points[i], reference) : 0.0, -static_cast<int>(i), 0);
  std::vector<int> chosen;
  LossPoints chosen_points;
  while (static_cast<int>(chosen.size()) < k) {
    auto [gain, negative_index, subset_size] = bounds.top();
    bounds.pop();
    const Point& p = points[static_cast<std::size_t>(-negative_index)];
    if (subset_size == chosen.size()) {
      chosen.push_back(-negative_index);
      if (below(p, reference)) chosen_points.push_back(p);
      continue;
    }
    if (gain > 0.0) gain = box_volume(p, reference) - hypervolume_inside(limited_to(p, chosen_points), reference);
    bounds.emplace(gain, negative_index, chosen.size());
  }
  return chosen;
}

}  // namespace bfhpo::hpo::tpe
