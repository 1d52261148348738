#include "trials/optimize.hpp"

#include "hpo/sampler_factory.hpp"
#include "report/trial_facts.hpp"
#include "trials/trial_metrics.hpp"

#include <chrono>
#include <thread>
#include <cmath>

namespace bfhpo::trials {

std::optional<ConfigProblem> OptimizeOptions::problem() const {
  if (n_trials && *n_trials < 1)
    return ConfigProblem{"--n-trials", std::to_string(*n_trials) + " is not a positive number of trials",
                         "give --n-trials 1 or more"};
  if (timeout_s && !(std::isfinite(*timeout_s) && *timeout_s > 0))
    return ConfigProblem{"--timeout", std::to_string(*timeout_s) + " is not a positive number of seconds",
                         "give e.g. --timeout 3600"};
  return std::nullopt;
}

OptimizeSummary optimize_study(const OptimizeOptions& options, const TrialObserver& observer,
                               const std::atomic<int>* interrupted) {
  if (const auto problem = options.problem())
    throw UserError("bfhpo optimize: " + problem->field + " " + problem->problem + ". Fix: " + problem->fix);
  const auto start = std::chrono::steady_clock::now();
  hpo::StudySpec spec = hpo::load_study_spec(options.study_file, options.storage);
  spec.require_search_space("optimize");
  if (options.n_trials) spec.n_trials = *options.n_trials;
  if (options.timeout_s) spec.timeout_s = *options.timeout_s;
  if (options.seed) spec.seed = *options.seed;
  StudyContext context = StudyContext::load(spec, interrupted);
  if (options.memory_gate) context.settings.memory.gate = *options.memory_gate;

  hpo::Study study(spec, hpo::make_sampler(spec));
  study.set_metric_names(objective_names(spec, context.settings));
  OptimizeSummary summary;
  summary.n_trials = spec.n_trials;
  summary.device = context.device.str();
  summary.budget_mb = context.budget_mb;
  summary.metric = objective_names(spec, context.settings)[report::ranked_objective(spec)];
  summary.recovered = study.recover_stale_trials();
  const hpo::FeasiblePredicate feasible = context.memory_feasibility();
  while (true) {
    if (interrupted && interrupted->load()) {
      summary.interrupted = true;
      break;
    }
    if (study.timed_out()) {
      summary.timed_out = true;
      break;
    }
    const auto ask_start = std::chrono::steady_clock::now();
    const std::optional<hpo::AskedTrial> next = study.ask_if_room(feasible);
    if (!next) {
      // Finished + running trials reach n_trials. While other workers' trials
      // run, wait: each one finishes, or its worker dies and it is re-queued
      // here, so a survivor completes the study.
      if (study.is_done() || !study.other_workers_running()) break;
      const std::vector<int> recovered = study.recover_stale_trials();
      summary.recovered.insert(summary.recovered.end(), recovered.begin(), recovered.end());
      if (recovered.empty()) std::this_thread::sleep_for(kWaitForWorkers);
      continue;
    }
    const hpo::AskedTrial& asked = *next;
    study.storage().set_trial_system_attr(
        asked.trial_id, "bfhpo:ask_seconds",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ask_start).count());
    summary.outcomes.push_back(run_trial(study, asked, context, observer));
    if (summary.outcomes.back().interrupted) {
      summary.interrupted = true;
      break;
    }
  }
  summary.trials = study.trials();
  summary.best = report::ranked_best(spec, summary.trials);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace bfhpo::trials
