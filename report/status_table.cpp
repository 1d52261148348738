#include "report/status_table.hpp"

#include "common/number_format.hpp"
#include "hpo/slurm_job.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "report/trial_facts.hpp"

#include <cstdio>
#include <sstream>

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

}  // namespace

std::string status_table(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                         const std::vector<double>& memory_levels_mb) {
  const nlohmann::json status = hpo::study_status_json(spec, trials);
  std::ostringstream out;
  out << "study " << spec.name << " (" << to_string(spec.direction) << "): " << status["finished"].get<int>() << " of "
      << spec.n_trials << " trials finished";
  for (const auto& [state, n] : status["counts"].items())
    if (n.get<int>() > 0) out << ", " << n.get<int>() << " " << state;
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%6s  %-9s %10s %8s %6s %10s %8s %8s  %s\n", "trial", "state", "value", "time",
                "batch", "chunk", "peak MB", "est. MB", "params");
  out << line;
  for (size_t i = 0; i < trials.size(); ++i) {
    const TrialFacts t = trial_facts(trials[i]);
    std::snprintf(line, sizeof line, "%6d  %-9s %10s %8s %6s %10s %8s %8s  ", t.number, hpo::to_string(t.state),
                  format_number(t.value, 6).c_str(), t.seconds ? format_duration(*t.seconds).c_str() : "-",
                  t.batch_size ? std::to_string(*t.batch_size).c_str() : "-", chunk_text(t).c_str(),
                  megabytes(t.measured_peak_mb).c_str(), megabytes(t.estimated_peak_mb).c_str());
    out << line << status["trials"][i]["params"].dump() << "\n";
    if (!t.reason.empty()) out << "        why: " << t.reason << "\n";
    if (const std::string worker = worker_text(trials[i]); t.state == hpo::TrialState::Running && !worker.empty())
      out << "        worker: " << worker << "\n";
  }
  if (const std::optional<hpo::FrozenTrial> best = hpo::best_of(trials, spec.direction))
    out << "best: trial " << best->number << " value " << format_number(best->value) << " params "
        << status["best"]["params"].dump() << "\n";
  else
    out << "best: none yet (no COMPLETE trial)\n";
  // Shown once a trial has a peak (never for an external-objective study).
  if (const auto candidates = frontier_candidates(trial_facts(trials)); !candidates.empty())
    out << memory_frontier_text(memory_frontier(candidates, spec.direction, memory_levels_mb), "value");
  return out.str();
}

}  // namespace bfhpo::report
