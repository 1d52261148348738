#include "report/html_report.hpp"

#include "common/number_format.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "report/memory_digest.hpp"
#include "report/param_importance.hpp"
#include "report/svg_chart.hpp"
#include "report/trial_facts.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace bfhpo::report {
namespace {

using nlohmann::json;

constexpr double kBandLevel = 0.05;  // the ECDF band's miss probability: a 95% simultaneous band
constexpr size_t kMaxScatterPoints = 800;

const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1140px;
       color: #1d2330; background: #fff; line-height: 1.45; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #dde2ea; }
.muted { color: #5c6678; } .grid { display: flex; flex-wrap: wrap; gap: 12px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
td, th { border-bottom: 1px solid #e6e9ef; padding: 3px 10px; text-align: left; vertical-align: top; }
th { background: #f4f6f9; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { background: #fff; border: 1px solid #e6e9ef; border-radius: 4px; }
.chart text { font-size: 11px; fill: #3b4456; } .chart .chart-title { font-size: 13px; font-weight: 600; fill: #1d2330; }
.chart .axis-label { font-size: 12px; } .frame { fill: none; stroke: #b9c0cc; } .grid line, line.grid { stroke: #eef0f4; }
.history-point, .complete, .measured { fill: #2f6fd0; } .best-line { fill: none; stroke: #e07b00; stroke-width: 2; }
.pruned { fill: #c43d3d; } .fail { fill: #7a7f8a; } .running, .waiting { fill: #b6bcc7; }
.curve { fill: none; stroke-width: 1.4; } .curve.complete { stroke: #2f6fd0; fill: none; }
.curve.pruned { stroke: #c43d3d; stroke-dasharray: 4 3; fill: none; } .curve.fail { stroke: #7a7f8a; fill: none; }
.pruned-end { stroke: #c43d3d; stroke-width: 2; fill: none; }
.estimate { fill: #fff; stroke: #2f6fd0; stroke-width: 1.5; } .pruned-estimate { stroke: #c43d3d; stroke-width: 2; fill: none; }
.budget { stroke: #c43d3d; stroke-width: 1.5; stroke-dasharray: 6 4; } .reference { stroke: #7a7f8a; stroke-dasharray: 4 4; fill: none; }
.ecdf { fill: none; stroke: #2f6fd0; stroke-width: 2; } .ecdf-band { fill: #2f6fd0; fill-opacity: 0.12; }
.recovery, .zscore { fill: #2f6fd0; fill-opacity: 0.45; } .importance { fill: #2f6fd0; }
.legend-swatch.estimate { fill: #fff; } .legend-swatch.best-line { fill: #e07b00; } .legend-swatch.budget { fill: #c43d3d; }
.legend-swatch.pruned-estimate, .legend-swatch.pruned-end { fill: #c43d3d; }
code { background: #f4f6f9; padding: 1px 4px; border-radius: 3px; }
)";

std::string esc(const std::string& text) { return xml_escape(text); }

std::vector<double> numbers(const json& values) {
  std::vector<double> out;
  for (const auto& v : values) out.push_back(v.is_number() ? v.get<double>() : std::nan(""));
  return out;
}

// Every k-th index so at most `limit` remain.
std::vector<size_t> thinned(size_t n, size_t limit) {
  const size_t stride = std::max<size_t>(1, (n + limit - 1) / limit);
  std::vector<size_t> out;
  for (size_t i = 0; i < n; i += stride) out.push_back(i);
  return out;
}

std::string at_a_glance(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                        const std::vector<TrialFacts>& facts, const std::string& metric) {
  const json status = hpo::study_status_json(spec, trials);
  std::ostringstream out;
  out << "<p class=\"muted\">";
  if (spec.multi_objective()) {
    for (std::size_t i = 0; i < spec.objectives.size(); ++i)
      out << (i ? ", " : "") << to_string(spec.objectives[i].direction) << " <b>" << esc(spec.objectives[i].metric)
          << "</b>";
  } else {
    out << to_string(spec.objectives.front().direction) << " <b>" << esc(metric) << "</b>";
  }
  for (const hpo::ConstraintSpec& constraint : spec.constraints) out << ", subject to " << esc(constraint.text());
  out << "; "
      << status["finished"].get<int>() << " of " << spec.n_trials << " trials finished";
  for (const auto& [state, n] : status["counts"].items())
    if (n.get<int>() > 0) out << ", " << n.get<int>() << " " << state;
  std::optional<double> budget;
  for (const auto& f : facts)
    if (f.budget_mb) budget = f.budget_mb;
  if (budget) out << "; memory budget " << format_mb(*budget);
  out << ".</p>\n";
  const std::optional<hpo::FrozenTrial> best_trial = ranked_best(spec, trials);
  if (!best_trial)
    return out.str() + (spec.constraints.empty() ? "<p>No COMPLETE trial yet.</p>\n"
                                                 : "<p>No COMPLETE trial meets the constraints yet.</p>\n");
  // Several objectives and no training metric to rank by: no one best trial, a front (below).
  if (spec.multi_objective() && !spec.has_simulator())
    return out.str() + "<p>No one best trial of several objectives: the Pareto front below holds " +
           std::to_string(status["best_trials"].size()) + ".</p>\n";
  const int best = best_trial->number;
  out << "<p>Best trial <b>" << best << "</b>: " << esc(metric) << " <b>"
      << format_number(best_trial->values[ranked_objective(spec)], 6) << "</b>";
  const auto it = std::find_if(facts.begin(), facts.end(), [&](const TrialFacts& f) { return f.number == best; });
  if (it != facts.end() && it->batch_size) out << ", trained with " << esc(it->trained_config());
  out << ".</p>\n";
  const json params = hpo::trial_summary_json(spec, *best_trial)["params"];
  if (params.empty()) return out.str();
  out << "<table><tr><th>parameter</th><th>value</th></tr>\n";
  for (const auto& [name, value] : params.items())
    out << "<tr><td>" << esc(name) << "</td><td class=\"num\">"
        << esc(value.is_number() ? format_number(value.get<double>(), 6) : value.dump()) << "</td></tr>\n";
  return out.str() + "</table>\n";
}

std::string history_chart(const std::vector<TrialFacts>& facts, hpo::StudyDirection direction,
                          const std::string& metric) {
  std::vector<double> xs, ys, best_x, best_y;
  std::vector<std::string> tips;
  std::vector<int> numbers_of;
  std::optional<double> best;
  for (const auto& f : facts) {
    if (f.state != hpo::TrialState::Complete || !f.value) continue;
    xs.push_back(f.number);
    ys.push_back(*f.value);
    numbers_of.push_back(f.number);
    tips.push_back("trial " + std::to_string(f.number) + ": " + format_number(f.value, 6));
    if (!best || (direction == hpo::StudyDirection::Minimize ? *f.value < *best : *f.value > *best)) best = f.value;
    best_x.push_back(f.number);
    best_y.push_back(*best);
  }
  const double last = facts.empty() ? 1.0 : facts.back().number;
  if (!best_x.empty()) {
    best_x.push_back(last + 0.5);
    best_y.push_back(*best);
  }
  SvgChart chart("Optimization history", "trial", metric, {-0.5, last + 0.5}, range_of(ys));
  chart.step_line(best_x, best_y, "best-line");
  chart.points(xs, ys, "history-point", tips, numbers_of);
  chart.legend({{"COMPLETE trial", "history-point"}, {"best so far", "best-line"}});
  return chart.svg();
}

std::string intermediate_chart(const std::vector<TrialFacts>& facts) {
  std::vector<double> all_steps, all_values;
  for (const auto& f : facts)
    for (const auto& [step, value] : f.intermediate_values) {
      all_steps.push_back(step);
      all_values.push_back(value);
    }
  if (all_steps.empty()) return "<p class=\"muted\">No trial reported intermediate values.</p>\n";
  SvgChart chart("Intermediate values (validation loss per epoch)", "epoch", "reported value",
                 range_of(all_steps, 0.03), range_of(all_values));
  std::vector<double> end_x, end_y;
  std::vector<std::string> end_tips;
  for (const auto& f : facts) {
    if (f.intermediate_values.empty()) continue;
    std::vector<double> xs, ys;
    for (const auto& [step, value] : f.intermediate_values) {
      xs.push_back(step);
      ys.push_back(value);
    }
    const std::string state = f.state == hpo::TrialState::Complete ? "complete"
                              : f.state == hpo::TrialState::Pruned ? "pruned"
                                                                    : "fail";
    chart.polyline(xs, ys, "curve " + state, "trial " + std::to_string(f.number) + " (" + hpo::to_string(f.state) + ")");
    if (f.state == hpo::TrialState::Pruned) {
      end_x.push_back(xs.back());
      end_y.push_back(ys.back());
      end_tips.push_back("trial " + std::to_string(f.number) + " pruned: " + f.reason);
    }
  }
  chart.crosses(end_x, end_y, "pruned-end", end_tips);
  chart.legend({{"COMPLETE", "complete"}, {"PRUNED (x: where it stopped)", "pruned"}, {"FAIL", "fail"}});
  return chart.svg();
}

std::string importance_section(const std::vector<hpo::FrozenTrial>& trials) {
  const auto importances = param_importances(trials);
  std::string out;
  if (importances.empty()) {
    out = "<p class=\"muted\">Needs at least 4 COMPLETE trials.</p>\n";
  } else {
    std::vector<std::string> labels;
    std::vector<double> lengths;
    for (const auto& p : importances) {
      labels.push_back(p.name);
      lengths.push_back(p.importance);
    }
    out = horizontal_bar_chart("Parameter importance", "share of the explained rank variance", labels, lengths,
                               "importance");
  }
  return out +
         "<p class=\"muted\">Method: for each parameter, a one-way ANOVA of the COMPLETE trials' objective "
         "<i>ranks</i> on the parameter's bins (its categories or distinct values, else up to 5 equal-count bins; "
         "trials without a conditional parameter form their own bin) gives &omega;&sup2;, the share of the rank "
         "variance the bins explain beyond chance (floored at 0); the bars are the &omega;&sup2; normalised to sum "
         "to 1. It sees each parameter alone, not interactions (fANOVA would).</p>\n";
}

// A study of several objectives: its Pareto front (Optuna's best_trials) as a
// table, and drawn over every COMPLETE trial on the first two objectives.
std::string pareto_section(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials) {
  const std::vector<hpo::FrozenTrial> front = hpo::pareto_front(trials, spec.directions());
  if (front.empty()) return "<p class=\"muted\">No COMPLETE trial on the front yet.</p>\n";
  const std::string& x_metric = spec.objectives[0].metric;
  const std::string& y_metric = spec.objectives[1].metric;
  std::vector<double> all_x, all_y, front_x, front_y, other_x, other_y;
  std::vector<std::string> front_tips, other_tips;
  std::vector<int> front_trials, other_trials;
  std::set<int> on_front;
  for (const auto& f : front) on_front.insert(f.number);
  for (const auto& t : trials) {
    if (t.state != hpo::TrialState::Complete || t.values.size() != spec.objectives.size()) continue;
    const bool is_front = on_front.count(t.number) > 0;
    std::string tip = "trial " + std::to_string(t.number) + ":";
    for (std::size_t i = 0; i < t.values.size(); ++i)
      tip += " " + spec.objectives[i].metric + " " + format_number(t.values[i]);
    if (!hpo::is_feasible(t)) tip += " (infeasible)";
    (is_front ? front_x : other_x).push_back(t.values[0]);
    (is_front ? front_y : other_y).push_back(t.values[1]);
    (is_front ? front_tips : other_tips).push_back(tip);
    (is_front ? front_trials : other_trials).push_back(t.number);
    all_x.push_back(t.values[0]);
    all_y.push_back(t.values[1]);
  }
  SvgChart chart("Pareto front: " + x_metric + " and " + y_metric, x_metric, y_metric, range_of(all_x, 0.04),
                 range_of(all_y));
  chart.points(other_x, other_y, "frontier estimate", other_tips, other_trials, 3.0);
  chart.points(front_x, front_y, "frontier measured", front_tips, front_trials, 4.0);
  chart.legend({{"on the front", "measured"}, {"dominated or infeasible", "estimate"}});
  std::ostringstream out;
  out << chart.svg() << "<table class=\"front\"><tr><th>trial</th>";
  for (const auto& objective : spec.objectives)
    out << "<th>" << esc(objective.metric) << " (" << to_string(objective.direction) << ")</th>";
  out << "</tr>\n";
  for (const auto& t : front) {
    out << "<tr class=\"front-row\"><td class=\"num\">" << t.number << "</td>";
    for (double v : t.values) out << "<td class=\"num\">" << format_number(v, 6) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"muted\">The trials no other COMPLETE" << (spec.constraints.empty() ? "" : ", feasible")
      << " trial beats on every objective (Optuna's <code>study.best_trials</code>; <code>bfhpo status --json</code>: "
         "<code>best_trials</code>).</p>\n";
  return out.str();
}

// The best trial at each memory level, and the front of value against peak.
std::string frontier_section(const std::vector<TrialFacts>& facts, hpo::StudyDirection direction,
                             const std::vector<double>& levels_mb, const std::string& metric) {
  const auto candidates = frontier_candidates(facts);
  if (candidates.empty())
    return "<p class=\"muted\">No COMPLETE trial records a memory peak (an external-objective study, or none "
           "finished yet).</p>\n";
  std::vector<double> measured_x, measured_y, estimated_x, estimated_y, front_x, front_y, all_x, all_y;
  std::vector<std::string> measured_tips, estimated_tips;
  std::vector<int> measured_trials, estimated_trials;
  for (const auto& c : candidates) {
    const std::string tip = "trial " + std::to_string(c.number) + ": " + metric + " " + format_number(c.value) +
                            ", peak " + format_mb(c.peak_mb) + (c.measured ? " measured" : " estimated");
    (c.measured ? measured_x : estimated_x).push_back(c.peak_mb);
    (c.measured ? measured_y : estimated_y).push_back(c.value);
    (c.measured ? measured_tips : estimated_tips).push_back(tip);
    (c.measured ? measured_trials : estimated_trials).push_back(c.number);
    all_x.push_back(c.peak_mb);
    all_y.push_back(c.value);
  }
  for (const auto& f : memory_pareto_front(candidates, direction)) {
    front_x.push_back(f.peak_mb);
    front_y.push_back(f.value);
  }
  all_x.push_back(0.0);
  front_x.push_back(range_of(all_x, 0.04).high);  // the last front value holds to the right edge
  front_y.push_back(front_y.back());
  SvgChart chart("Best " + metric + " within a memory peak", "peak MB (measured, else estimated)", metric,
                 range_of(all_x, 0.04), range_of(all_y));
  chart.step_line(front_x, front_y, "best-line");
  chart.points(estimated_x, estimated_y, "frontier estimate", estimated_tips, estimated_trials, 4.0);
  chart.points(measured_x, measured_y, "frontier measured", measured_tips, measured_trials, 3.5);
  chart.legend({{"front (none better with less)", "best-line"}, {"measured peak", "measured"},
                {"estimated peak", "estimate"}});
  std::ostringstream out;
  out << chart.svg() << "<table class=\"frontier\"><tr><th>memory</th><th>trial</th><th>" << esc(metric)
      << "</th><th>peak</th><th>estimated</th></tr>\n";
  for (const auto& level : memory_frontier(candidates, direction, levels_mb)) {
    out << "<tr class=\"frontier-row\"><td>under " << format_number(level.level_mb / kMbPerGb) << " GB</td>";
    if (!level.best) {
      out << "<td colspan=\"4\">none fits</td></tr>\n";
      continue;
    }
    const auto& b = *level.best;
    out << "<td class=\"num\">" << b.number << "</td><td class=\"num\">" << format_number(b.value)
        << "</td><td class=\"num\">" << format_mb(b.peak_mb) << (b.measured ? " measured" : " estimated")
        << "</td><td class=\"num\">" << (b.estimated_peak_mb ? format_mb(*b.estimated_peak_mb) : "-")
        << "</td></tr>\n";
  }
  out << "</table>\n<p class=\"muted\">Each row: the best COMPLETE trial whose peak fits the size "
         "(<code>bfhpo export --best --budget-mb N</code> exports it); <code>--memory-levels</code> names other "
         "sizes.</p>\n";
  return out.str();
}

std::string memory_section(const std::vector<TrialFacts>& facts) {
  std::vector<double> est_x, est_y, measured_x, measured_y, pruned_x, pruned_y, all_mb;
  std::vector<std::string> est_tips, measured_tips, pruned_tips;
  std::optional<double> budget;
  for (const auto& f : facts) {
    if (f.budget_mb) budget = f.budget_mb;
    if (!f.estimated_peak_mb) continue;
    all_mb.push_back(*f.estimated_peak_mb);
    const std::string who = "trial " + std::to_string(f.number) + ": ";
    if (f.gate == "pruned") {
      pruned_x.push_back(f.number);
      pruned_y.push_back(*f.estimated_peak_mb);
      pruned_tips.push_back(who + "estimated " + format_mb(*f.estimated_peak_mb) + ", pruned before launch");
      continue;
    }
    est_x.push_back(f.number);
    est_y.push_back(*f.estimated_peak_mb);
    est_tips.push_back(who + "estimated " + format_mb(*f.estimated_peak_mb) +
                       (f.gate_memory.empty() ? "" : " with " + f.gate_memory));
    if (f.launched() && f.measured_peak_mb) {
      measured_x.push_back(f.number);
      measured_y.push_back(*f.measured_peak_mb);
      all_mb.push_back(*f.measured_peak_mb);
      measured_tips.push_back(who + "measured " + format_mb(*f.measured_peak_mb));
    }
  }
  if (all_mb.empty()) return "<p class=\"muted\">No trial recorded a memory estimate (an external-objective study).</p>\n";
  if (budget) all_mb.push_back(*budget);
  all_mb.push_back(0.0);
  const double last = facts.back().number;
  SvgChart chart("Peak memory per trial", "trial", "MB", {-0.5, last + 0.5}, range_of(all_mb, 0.04));
  if (budget) chart.horizontal_line(*budget, "budget", "budget " + format_mb(*budget));
  chart.points(est_x, est_y, "estimate", est_tips, {}, 4.0);
  chart.points(measured_x, measured_y, "measured", measured_tips, {}, 3.0);
  chart.crosses(pruned_x, pruned_y, "pruned-estimate", pruned_tips);
  chart.legend({{"estimated (worst-case shape)", "estimate"}, {"measured", "measured"}, {"pruned by the gate", "pruned-estimate"}});

  const MemoryDigest digest = memory_digest(facts);
  std::ostringstream out;
  out << chart.svg() << "<p>The gate pruned <b>" << digest.pruned_before_launch << "</b> trials before launch and "
      << "re-chunked <b>" << digest.rechunked << "</b> of the <b>" << digest.launched << "</b> it launched";
  for (const auto& [memory, n] : digest.rechunked_to) out << "; " << n << " to " << esc(memory);
  out << ". " << digest.survived_oom << " trials survived OOMs, " << digest.failed_oom << " gave up.";
  if (!digest.peak_ratios.empty()) {
    const auto [low, high] = std::minmax_element(digest.peak_ratios.begin(), digest.peak_ratios.end());
    out << " Measured peak / estimate: " << format_number(*low, 2) << " to " << format_number(*high, 2) << ", median "
        << format_number(median_of(digest.peak_ratios), 2)
        << " (the estimate is at the study's largest shape, so a little below 1 is expected).";
  }
  out << "</p>\n<table class=\"gate\"><tr><th>trial</th><th>state</th><th>gate</th><th>estimated</th>"
         "<th>measured</th><th>OOM ladder (each configuration that ran out of memory)</th><th>trained with</th></tr>\n";
  for (const auto& f : facts) {
    if (f.gate.empty() && f.oom_history.empty()) continue;
    std::string ladder;
    for (const auto& rung : f.oom_history) ladder += (ladder.empty() ? "" : " &rarr; ") + esc(rung.config);
    const std::string gate = f.gate == "rechunked" ? "re-chunked to " + f.gate_memory : f.gate;
    out << "<tr class=\"gate-row\"><td class=\"num\">" << f.number << "</td><td>" << hpo::to_string(f.state)
        << "</td><td>" << esc(gate) << "</td><td class=\"num\">"
        << (f.estimated_peak_mb ? format_mb(*f.estimated_peak_mb) : "-") << "</td><td class=\"num\">"
        << (f.launched() && f.measured_peak_mb ? format_mb(*f.measured_peak_mb) : "-") << "</td><td>"
        << (ladder.empty() ? "-" : ladder) << "</td><td>"
        << (f.batch_size ? esc(f.trained_config()) : f.oom_history.empty() ? "-" : "FAIL") << "</td></tr>\n";
  }
  out << "</table>\n";
  return out.str();
}

std::string time_chart(const std::vector<TrialFacts>& facts) {
  std::vector<double> xs, seconds;
  std::vector<std::string> classes, tips;
  for (const auto& f : facts) {
    if (!f.seconds) continue;
    xs.push_back(f.number);
    seconds.push_back(*f.seconds);
    std::string state = hpo::to_string(f.state);
    std::transform(state.begin(), state.end(), state.begin(), [](unsigned char c) { return std::tolower(c); });
    classes.push_back("time-bar " + state);
    tips.push_back("trial " + std::to_string(f.number) + " " + hpo::to_string(f.state) + ": " +
                   format_duration(*f.seconds));
  }
  if (xs.empty()) return "<p class=\"muted\">No trial recorded its duration.</p>\n";
  std::vector<double> span = seconds;
  span.push_back(0.0);
  Range y = range_of(span, 0.04);
  y.low = 0.0;
  SvgChart chart("Time per trial", "trial", "seconds", {-0.5, facts.back().number + 0.5}, y);
  chart.bars(xs, seconds, 0.7, classes, tips);
  chart.legend({{"COMPLETE", "complete"}, {"PRUNED", "pruned"}, {"FAIL", "fail"}});
  return chart.svg();
}

// ECDF(u) - u of the fractional ranks on a grid, with the DKW band +-sqrt(ln(2/a) / 2N).
std::string ecdf_chart(const std::string& name, std::vector<double> ranks) {
  std::sort(ranks.begin(), ranks.end());
  const double n = static_cast<double>(ranks.size());
  const double half_width = std::sqrt(std::log(2.0 / kBandLevel) / (2.0 * n));
  std::vector<double> grid, difference, low, high;
  for (int i = 0; i <= 100; ++i) {
    const double u = i / 100.0;
    const double below = static_cast<double>(std::upper_bound(ranks.begin(), ranks.end(), u) - ranks.begin());
    grid.push_back(u);
    difference.push_back(below / n - u);
    low.push_back(-half_width);
    high.push_back(half_width);
  }
  const double extent = std::max(half_width, *std::max_element(difference.begin(), difference.end(),
                                                               [](double a, double b) { return std::fabs(a) < std::fabs(b); }) *
                                                 (difference.empty() ? 0.0 : 1.0));
  const double reach = std::max(half_width, std::fabs(extent)) * 1.25;
  SvgChart chart(name + ": SBC rank ECDF difference", "fractional rank u", "ECDF(u) - u", {0, 1}, {-reach, reach}, 360, 260);
  chart.band(grid, low, high, "ecdf-band");
  chart.horizontal_line(0.0, "reference");
  chart.polyline(grid, difference, "ecdf");
  return chart.svg();
}

std::string diagnostics_section(const TrialFacts& best) {
  std::ostringstream out;
  if (best.diagnostics.is_object()) {
    out << "<table><tr><th>parameter</th><th>calibration error</th><th>rank KS</th><th>recovery r</th>"
           "<th>NRMSE</th><th>contraction</th><th>z mean</th><th>z std</th></tr>\n";
    for (const auto& p : best.diagnostics.value("parameters", json::array())) {
      out << "<tr><td>" << esc(p.value("name", "?")) << "</td>";
      for (const char* key : {"calibration_error", "rank_ks", "correlation", "nrmse", "contraction", "z_mean", "z_std"}) {
        const json v = p.value(key, json());
        out << "<td class=\"num\">" << (v.is_number() ? format_number(v.get<double>(), 3) : "-") << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  if (best.posterior_items.empty()) return out.str() + "<p class=\"muted\">The best trial recorded no per-item posterior summaries.</p>\n";
  std::ifstream in(best.posterior_items);
  json items;
  try {
    if (in) items = json::parse(in);
  } catch (const json::parse_error&) {
    items = json();
  }
  if (!items.is_object())
    return out.str() + "<p class=\"muted\">Cannot read " + esc(best.posterior_items) + " (moved or deleted?).</p>\n";
  const double draws = items.value("n_draws", 1.0);
  out << "<p class=\"muted\">" << items["parameters"][0]["mean"].size() << " simulated items, " << draws
      << " posterior draws each. The band is the 95% simultaneous Dvoretzky-Kiefer-Wolfowitz band of a uniform "
         "ECDF; a calibrated posterior stays inside it. Recovery: posterior mean against the true value. z-score "
         "(posterior mean - truth) / posterior std against contraction 1 - posterior variance / prior variance: "
         "calibrated posteriors scatter |z| &lt; 2 whatever their contraction.</p>\n";
  for (const auto& p : items["parameters"]) {
    const std::string name = p.value("name", "?");
    const std::vector<double> mean = numbers(p["mean"]), sd = numbers(p["std"]), truth = numbers(p["truth"]),
                              rank = numbers(p["rank"]);
    const double prior = p.value("prior_variance", 1.0);
    std::vector<double> fractional;
    for (const double r : rank) fractional.push_back(r / draws);
    std::vector<double> shown_truth, shown_mean, contraction, z;
    for (const size_t i : thinned(mean.size(), kMaxScatterPoints)) {
      shown_truth.push_back(truth[i]);
      shown_mean.push_back(mean[i]);
      contraction.push_back(1.0 - sd[i] * sd[i] / prior);
      z.push_back(sd[i] > 0 ? (mean[i] - truth[i]) / sd[i] : std::nan(""));
    }
    const Range both = range_of(shown_truth, shown_mean);
    SvgChart recovery(name + ": recovery", "true value", "posterior mean", both, both, 360, 260);
    recovery.diagonal("reference");
    recovery.points(shown_truth, shown_mean, "recovery", {}, {}, 2.2);
    Range z_range = range_of(z, 0.05);
    z_range.low = std::max(z_range.low, -6.0);
    z_range.high = std::min(z_range.high, 6.0);
    Range c_range = range_of(contraction, 0.05);
    c_range.low = std::max(c_range.low, -0.5);
    c_range.high = std::min(std::max(c_range.high, 1.0), 1.05);
    SvgChart zscore(name + ": z-score vs contraction", "posterior contraction", "z-score", c_range, z_range, 360, 260);
    zscore.horizontal_line(2.0, "reference");
    zscore.horizontal_line(-2.0, "reference");
    zscore.points(contraction, z, "zscore", {}, {}, 2.2);
    out << "<div class=\"grid\">" << ecdf_chart(name, fractional) << recovery.svg() << zscore.svg() << "</div>\n";
  }
  return out.str();
}

}  // namespace

std::string html_report(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                        const json& study_system_attrs, const std::vector<double>& memory_levels_mb) {
  const std::size_t ranked = ranked_objective(spec);
  const std::vector<TrialFacts> facts = trial_facts(trials, ranked);
  const json names = study_system_attrs.value(hpo::kMetricNamesAttr, json());
  const std::string metric = names.is_array() && names.size() > ranked && names[ranked].is_string()
                                 ? names[ranked].get<std::string>()
                                 : std::string("objective");
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>bfhpo report: "
      << esc(spec.name) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>bfhpo report: "
      << esc(spec.name) << "</h1>\n"
      << at_a_glance(spec, trials, facts, metric);
  out << "<h2>Optimization</h2>\n<div class=\"grid\">" << history_chart(facts, ranked_direction(spec), metric)
      << intermediate_chart(facts) << "</div>\n";
  out << "<h2>Parameter importance</h2>\n" << importance_section(trials);
  out << "<h2>Memory</h2>\n" << memory_section(facts);
  if (spec.multi_objective()) out << "<h2>Pareto front</h2>\n" << pareto_section(spec, trials);
  out << "<h2>Memory frontier</h2>\n" << frontier_section(facts, ranked_direction(spec), memory_levels_mb, metric);
  out << "<h2>Time per trial</h2>\n" << time_chart(facts);
  const auto best = ranked_best(spec, trials);
  if (best) {
    out << "<h2>Posterior diagnostics of the best trial (" << best->number << ")</h2>\n"
        << diagnostics_section(trial_facts(*best, ranked));
  }
  out << "<p class=\"muted\">Written by <code>bfhpo report</code> from " << esc(hpo::printable_storage(spec.storage.string()))
      << ".</p>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace bfhpo::report
