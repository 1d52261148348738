#include "report/run_summary.hpp"

#include "common/number_format.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "report/memory_digest.hpp"
#include "report/memory_frontier.hpp"
#include "report/pareto_front_text.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace bfhpo::report {
namespace {

using nlohmann::json;

std::string plural(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

void gate_lines(std::ostringstream& out, const std::vector<TrialFacts>& ran) {
  const MemoryDigest digest = memory_digest(ran);
  if (digest.pruned_before_launch + digest.launched == 0) return;
  out << "memory gate: " << digest.pruned_before_launch << " of " << ran.size() << " pruned before launch, "
      << digest.rechunked << " of " << digest.launched << " launched re-chunked";
  if (!digest.rechunked_to.empty()) {
    out << " (";
    bool first = true;
    for (const auto& [memory, n] : digest.rechunked_to) {
      out << (first ? "" : "; ") << n << " to " << memory;
      first = false;
    }
    out << ")";
  }
  out << "\n";
  if (!digest.peak_ratios.empty()) {
    const auto [low, high] = std::minmax_element(digest.peak_ratios.begin(), digest.peak_ratios.end());
    out << "peak memory: measured " << format_number(*low, 2) << "-" << format_number(*high, 2)
        << " x the estimate over " << plural(static_cast<int>(digest.peak_ratios.size()), "trial") << " (median "
        << format_number(median_of(digest.peak_ratios), 2) << ")";
    if (digest.closest_to_budget) {
      const auto& t = *std::find_if(ran.begin(), ran.end(),
                                    [&](const TrialFacts& f) { return f.number == *digest.closest_to_budget; });
      out << "; nearest the budget: trial " << t.number << ", " << format_mb(*t.measured_peak_mb) << " of "
          << format_mb(*t.budget_mb) << " (estimated " << format_mb(t.estimated_peak_mb.value_or(0)) << ")";
    }
    out << "\n";
  }
}

void ladder_lines(std::ostringstream& out, const std::vector<TrialFacts>& ran) {
  bool header = false;
  for (const auto& t : ran) {
    if (t.oom_history.empty()) continue;
    if (!header) out << "OOM ladders (each configuration that ran out of memory, then what trained):\n";
    header = true;
    const bool survived = t.batch_size.has_value();
    out << "  trial " << t.number << (survived ? " survived " : " gave up after ")
        << plural(static_cast<int>(t.oom_history.size()), "OOM") << ":";
    for (const auto& rung : t.oom_history) out << " [" << rung.config << "] ->";
    out << (survived ? " trained with " + t.trained_config() : std::string(" FAIL")) << "\n";
  }
}

void best_lines(std::ostringstream& out, const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                const RunInfo& run) {
  const std::size_t ranked = ranked_objective(spec);
  const std::optional<hpo::FrozenTrial> best = ranked_best(spec, trials);
  if (!best) {
    out << (spec.constraints.empty() ? "no COMPLETE trial yet\n" : "no COMPLETE trial meets the constraints yet\n");
    return;
  }
  if (spec.multi_objective()) out << pareto_front_text(spec, trials);
  const TrialFacts facts = trial_facts(*best, ranked);
  out << "best trial " << best->number << ": " << run.metric << " " << format_number(facts.value) << "\n";
  out << "  params " << hpo::trial_summary_json(spec, *best)["params"].dump() << "\n";
  if (facts.batch_size) {
    out << "  trained with " << facts.trained_config();
    if (facts.seconds) out << " in " << format_duration(*facts.seconds);
    if (facts.measured_peak_mb)
      out << ", peak " << format_mb(*facts.measured_peak_mb) << " (estimated "
          << format_mb(facts.estimated_peak_mb.value_or(0)) << ")";
    out << "\n";
  }
  if (!facts.diagnostics.is_object()) return;
  char line[200];
  std::snprintf(line, sizeof line, "  %-10s %17s %11s %8s %12s %7s %6s\n", "parameter", "calibration error",
                "recovery r", "nrmse", "contraction", "z mean", "z std");
  out << line;
  const auto number = [](const json& p, const char* key) {
    const json v = p.value(key, json());
    return v.is_number() ? format_number(v.get<double>(), 3) : std::string("-");
  };
  for (const auto& p : facts.diagnostics.value("parameters", json::array())) {
    std::snprintf(line, sizeof line, "  %-10s %17s %11s %8s %12s %7s %6s\n", p.value("name", "?").c_str(),
                  number(p, "calibration_error").c_str(), number(p, "correlation").c_str(),
                  number(p, "nrmse").c_str(), number(p, "contraction").c_str(), number(p, "z_mean").c_str(),
                  number(p, "z_std").c_str());
    out << line;
  }
}

}  // namespace

std::string run_summary(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials, const RunInfo& run) {
  std::ostringstream out;
  int counts[5] = {0, 0, 0, 0, 0};
  for (const auto& t : trials) ++counts[static_cast<int>(t.state)];
  using S = hpo::TrialState;
  out << "\nstudy '" << spec.name << "': " << hpo::count_finished(trials) << "/" << run.n_trials << " finished (complete "
      << counts[int(S::Complete)] << ", pruned " << counts[int(S::Pruned)] << ", fail " << counts[int(S::Fail)]
      << ", running " << counts[int(S::Running)] << ", waiting " << counts[int(S::Waiting)] << ")\n";
  out << "this run: " << plural(static_cast<int>(run.ran.size()), "trial") << " in " << format_duration(run.seconds)
      << " on " << run.device << ", memory budget " << (run.budget_mb ? format_mb(*run.budget_mb) : "none")
      << (run.interrupted ? ", interrupted" : "") << (run.timed_out ? ", timed out" : "") << "\n";
  if (!run.recovered.empty()) {
    out << "re-queued on start (their worker was gone):";
    for (const int number : run.recovered) out << " " << number;
    out << "\n";
  }
  const std::set<int> ran_numbers(run.ran.begin(), run.ran.end());
  std::vector<TrialFacts> ran;
  for (const auto& t : trials)
    if (ran_numbers.count(t.number)) ran.push_back(trial_facts(t));
  gate_lines(out, ran);
  ladder_lines(out, ran);
  for (const auto& t : ran)
    if (t.state != S::Complete && !t.reason.empty())
      out << "  trial " << t.number << " " << hpo::to_string(t.state) << ": " << t.reason << "\n";
  best_lines(out, spec, trials, run);
  if (const auto candidates = frontier_candidates(trial_facts(trials, ranked_objective(spec))); !candidates.empty())
    out << memory_frontier_text(memory_frontier(candidates, ranked_direction(spec), default_memory_levels_mb()),
                                run.metric);
  return out.str();
}

}  // namespace bfhpo::report
