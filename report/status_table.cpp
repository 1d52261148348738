#include "report/status_table.hpp"

#include "common/number_format.hpp"
#include "hpo/slurm_job.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "report/pareto_front_text.hpp"
#include "report/trial_facts.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>

namespace bfhpo::report {
namespace {

std::string megabytes(const std::optional<double>& mb) {
  if (!mb) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", *mb);
  return text;
}

std::string chunk_text(const TrialFacts& t) {
  if (!t.batch_size) return "-";
  std::string text = t.item_chunk_size ? std::to_string(*t.item_chunk_size) : "none";
  if (t.person_chunk_size) text += "/" + std::to_string(*t.person_chunk_size) + "p";
  return t.gradient_checkpointing ? text + "+ckpt" : text;
}

// "slurm job 12_3 on node gpu07, GPU 1 (pid 4242)" or "pid 4242 on host ws1"; empty without a worker record.
std::string worker_text(const hpo::FrozenTrial& trial) {
  const auto record = trial.system_attrs.find(hpo::kWorkerAttr);
  if (record == trial.system_attrs.end() || !record->is_object()) return "";
  const std::string pid = record->contains("pid") ? "pid " + (*record)["pid"].dump() : "";
  if (const auto job = hpo::slurm_job_of(*record)) return job->describe() + (pid.empty() ? "" : " (" + pid + ")");
  const auto host = record->find("host");
  if (pid.empty() || host == record->end() || !host->is_string()) return "";
  return pid + " on host " + host->get<std::string>();
}

// "minimize", or "minimize val_nll, minimize measured_peak_mb" for several, with the constraints.
std::string objectives_text(const hpo::StudySpec& spec) {
  std::string text;
  if (!spec.multi_objective()) text = hpo::to_string(spec.objectives.front().direction);
  for (std::size_t i = 0; spec.multi_objective() && i < spec.objectives.size(); ++i)
    text += (i ? ", " : "") + std::string(hpo::to_string(spec.objectives[i].direction)) + " " + spec.objectives[i].metric;
  for (const hpo::ConstraintSpec& constraint : spec.constraints) text += "; " + constraint.text();
  return text;
}

}  // namespace

std::string status_table(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                         const std::vector<double>& memory_levels_mb) {
  const nlohmann::json status = hpo::study_status_json(spec, trials);
  std::ostringstream out;
  out << "study " << spec.name << " (" << objectives_text(spec) << "): " << status["finished"].get<int>() << " of "
      << spec.n_trials << " trials finished";
  for (const auto& [state, n] : status["counts"].items())
    if (n.get<int>() > 0) out << ", " << n.get<int>() << " " << state;
  out << "\n";
  // The columns after trial and state, right-aligned, each as wide as its
  // widest cell; those no trial has a value of ("-": an external study records
  // no time, batch, chunk or peak) are left out. cells[0] is the header.
  struct Column {
    std::size_t width;
    bool always;
    std::vector<std::string> cells;
  };
  // A value column an objective (headed by its metric when there are several).
  std::vector<Column> columns;
  const std::size_t n_objectives = spec.objectives.size();
  for (const hpo::ObjectiveSpec& objective : spec.objectives)
    columns.push_back({10, true, {n_objectives > 1 ? objective.metric : "value"}});
  for (const auto& [header, width] : {std::pair{"time", 8}, {"batch", 6}, {"chunk", 10}, {"peak MB", 8}, {"est. MB", 8}})
    columns.push_back({static_cast<std::size_t>(width), false, {header}});
  std::vector<TrialFacts> facts;
  for (const hpo::FrozenTrial& trial : trials) {
    const TrialFacts t = trial_facts(trial);
    for (std::size_t k = 0; k < n_objectives; ++k)
      columns[k].cells.push_back(k < trial.values.size() ? format_number(trial.values[k], 4) : "-");
    const std::string cells[] = {t.seconds ? format_duration(*t.seconds) : "-",
                                 t.batch_size ? std::to_string(*t.batch_size) : "-", chunk_text(t),
                                 megabytes(t.measured_peak_mb), megabytes(t.estimated_peak_mb)};
    for (std::size_t c = 0; c < 5; ++c) columns[n_objectives + c].cells.push_back(cells[c]);
    facts.push_back(t);
  }
  columns.erase(std::remove_if(columns.begin(), columns.end(),
                               [](const Column& c) {
                                 return !c.always && std::all_of(c.cells.begin() + 1, c.cells.end(),
                                                                 [](const std::string& cell) { return cell == "-"; });
                               }),
                columns.end());
  for (Column& column : columns)
    for (const std::string& cell : column.cells) column.width = std::max(column.width, cell.size());
  const auto row = [&](const std::string& trial, const std::string& state, std::size_t line) {
    char start[64];
    std::snprintf(start, sizeof start, "%6s  %-9s", trial.c_str(), state.c_str());
    std::string text = start;
    for (const Column& column : columns)
      text += " " + std::string(column.width - column.cells[line].size(), ' ') + column.cells[line];
    return text + "  ";
  };
  out << row("trial", "state", 0) << "params\n";
  for (size_t i = 0; i < trials.size(); ++i) {
    const TrialFacts& t = facts[i];
    out << row(std::to_string(t.number), hpo::to_string(t.state), i + 1) << status["trials"][i]["params"].dump() << "\n";
    if (!t.reason.empty()) out << "        why: " << t.reason << "\n";
    if (const std::string worker = worker_text(trials[i]); t.state == hpo::TrialState::Running && !worker.empty())
      out << "        worker: " << worker << "\n";
  }
  if (spec.multi_objective())
    out << pareto_front_text(spec, trials);
  else if (const std::optional<hpo::FrozenTrial> best = hpo::best_of(trials, spec.objectives.front().direction))
    out << "best: trial " << best->number << " value " << format_number(best->value()) << " params "
        << status["best"]["params"].dump() << "\n";
  else
    out << (spec.constraints.empty() ? "best: none yet (no COMPLETE trial)\n"
                                     : "best: none yet (no COMPLETE trial meets the constraints)\n");
  // Shown once a trial has a peak (never for an external-objective study).
  const std::size_t ranked = ranked_objective(spec);
  if (const auto candidates = frontier_candidates(trial_facts(trials, ranked)); !candidates.empty())
    out << memory_frontier_text(memory_frontier(candidates, ranked_direction(spec), memory_levels_mb),
                                spec.multi_objective() ? spec.objectives[ranked].metric : "value");
  return out.str();
}

}  // namespace bfhpo::report
