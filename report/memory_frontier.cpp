#include "report/memory_frontier.hpp"

#include "common/number_format.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace bfhpo::report {
namespace {

// a before b: the better value, then the smaller peak, then the earlier trial.
bool better(const FrontierTrial& a, const FrontierTrial& b, hpo::StudyDirection direction) {
  if (a.value != b.value) return direction == hpo::StudyDirection::Minimize ? a.value < b.value : a.value > b.value;
  if (a.peak_mb != b.peak_mb) return a.peak_mb < b.peak_mb;
  return a.number < b.number;
}

}  // namespace

std::vector<double> default_memory_levels_mb() {
  std::vector<double> levels;
  for (double gb : {8.0, 16.0, 24.0, 40.0, 80.0}) levels.push_back(gb * kMbPerGb);
  return levels;
}

std::vector<double> parse_memory_levels_gb(const std::string& text, const std::string& option) {
  const auto not_a_size = [&](const std::string& item) {
    return UserError(option + " '" + text + "': '" + item + "' is not a memory size in GB. Fix: give sizes in GB " +
                     "separated by commas, e.g. 8,16,24,40,80");
  };
  // getline drops an empty last item ("8,"): refused as "8,,16" is.
  if (!text.empty() && text.back() == ',') throw not_a_size("");
  std::vector<double> levels;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t used = 0;
    double gb = 0.0;
    try {
      gb = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(gb > 0.0) || !std::isfinite(gb)) throw not_a_size(item);
    levels.push_back(gb * kMbPerGb);
  }
  if (levels.empty())
    throw UserError(option + " is empty. Fix: give sizes in GB separated by commas, e.g. 8,16,24,40,80");
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

std::vector<FrontierTrial> frontier_candidates(const std::vector<TrialFacts>& facts) {
  std::vector<FrontierTrial> candidates;
  for (const auto& f : facts) {
    if (f.state != hpo::TrialState::Complete || !f.feasible || !f.value || !std::isfinite(*f.value)) continue;
    const bool measured = f.launched() && f.measured_peak_mb.has_value();
    if (!measured && !f.estimated_peak_mb) continue;
    candidates.push_back({f.number, *f.value, measured ? *f.measured_peak_mb : *f.estimated_peak_mb, measured,
                          f.estimated_peak_mb});
  }
  return candidates;
}

std::optional<FrontierTrial> best_within(const std::vector<FrontierTrial>& candidates, hpo::StudyDirection direction,
                                         double budget_mb) {
  std::optional<FrontierTrial> best;
  for (const auto& c : candidates)
    if (c.peak_mb <= budget_mb && (!best || better(c, *best, direction))) best = c;
  return best;
}

std::vector<FrontierTrial> memory_pareto_front(const std::vector<FrontierTrial>& candidates,
                                               hpo::StudyDirection direction) {
  // By peak ascending (ties: the better value first); a trial is on the front
  // when its value beats every trial of a smaller or equal peak before it.
  auto by_peak = candidates;
  std::sort(by_peak.begin(), by_peak.end(), [&](const FrontierTrial& a, const FrontierTrial& b) {
    if (a.peak_mb != b.peak_mb) return a.peak_mb < b.peak_mb;
    return better(a, b, direction);
  });
  std::vector<FrontierTrial> front;
  for (const auto& c : by_peak)
    if (front.empty() || (direction == hpo::StudyDirection::Minimize ? c.value < front.back().value
                                                                     : c.value > front.back().value))
      front.push_back(c);
  return front;
}

std::vector<FrontierLevel> memory_frontier(const std::vector<FrontierTrial>& candidates,
                                           hpo::StudyDirection direction, const std::vector<double>& levels_mb) {
  std::vector<FrontierLevel> levels;
  for (double level : levels_mb) levels.push_back({level, best_within(candidates, direction, level)});
  return levels;
}

nlohmann::json memory_frontier_json(const std::vector<FrontierLevel>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& level : levels) {
    nlohmann::json row = {{"level_mb", level.level_mb}, {"trial", nullptr}, {"value", nullptr},
                          {"peak_mb", nullptr},         {"peak", nullptr},  {"estimated_peak_mb", nullptr}};
    if (level.best) {
      row["trial"] = level.best->number;
      row["value"] = level.best->value;
      row["peak_mb"] = level.best->peak_mb;
      row["peak"] = level.best->measured ? "measured" : "estimated";
      if (level.best->estimated_peak_mb) row["estimated_peak_mb"] = *level.best->estimated_peak_mb;
    }
    out.push_back(row);
  }
  return out;
}

std::string memory_frontier_text(const std::vector<FrontierLevel>& levels, const std::string& metric) {
  std::ostringstream out;
  out << "memory frontier (the best trial whose peak fits each size; measured, else estimated):\n";
  const auto same = [](const FrontierLevel& a, const FrontierLevel& b) {
    return a.best.has_value() == b.best.has_value() && (!a.best || a.best->number == b.best->number);
  };
  for (size_t first = 0; first < levels.size();) {
    size_t end = first + 1;  // the sizes that share the first's answer: one line
    while (end < levels.size() && same(levels[first], levels[end])) ++end;
    out << "  under ";
    for (size_t i = first; i < end; ++i)
      out << (i == first ? "" : i + 1 == end ? " or " : ", ") << format_number(levels[i].level_mb / kMbPerGb);
    out << " GB: ";
    const auto& level = levels[first];
    first = end;
    if (!level.best) {
      out << "none fits\n";
      continue;
    }
    const auto& b = *level.best;
    out << "trial " << b.number << ", " << metric << " " << format_number(b.value) << ", peak "
        << format_mb(b.peak_mb) << (b.measured ? " measured" : " estimated");
    if (b.measured && b.estimated_peak_mb) out << " (estimated " << format_mb(*b.estimated_peak_mb) << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace bfhpo::report
