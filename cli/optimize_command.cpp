#include "cli/command.hpp"
#include "cli/progress_display.hpp"
#include "common/number_format.hpp"
#include "report/run_summary.hpp"
#include "trials/optimize.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>

namespace bfhpo::cli {
namespace {

std::atomic<int> g_interrupted{0};  // the signal received, 0 before any

extern "C" void on_interrupt(int signal) { g_interrupted.store(signal); }

// "out of memory at step 12 with batch 32, chunk none (12.5 MB requested): retrying with batch 32, chunk 8, checkpointing"
std::string oom_notice(int trial, const trials::OomEvent& failed, const std::optional<trials::OomEvent>& next) {
  std::string text = "trial " + std::to_string(trial) + ": out of memory at step " + std::to_string(failed.step) +
                     " with " + trials::describe(failed);
  if (failed.bytes_requested) text += " (" + format_mb(static_cast<double>(*failed.bytes_requested) / (1024.0 * 1024.0)) + " requested)";
  return text + (next ? ": retrying the step with " + trials::describe(*next)
                      : ": no cheaper configuration left (memory.oom_retry.min_batch_size), the trial fails");
}

// " value 1.23", " values 1.23/512" for several, "" for none.
std::string values_text(const std::vector<double>& values) {
  if (values.empty()) return "";
  std::string text = values.size() == 1 ? " value " : " values ";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "/" : "") + format_number(values[i]);
  return text;
}

}  // namespace

int run_optimize(const VerbArgs& args) {
  trials::OptimizeOptions request;
  request.study_file = args["study"].as<std::string>();
  request.storage = storage_override(args);
  if (args.count("n-trials")) request.n_trials = args["n-trials"].as<int>();
  if (args.count("timeout")) request.timeout_s = args["timeout"].as<double>();
  if (args.count("seed")) request.seed = args["seed"].as<uint64_t>();
  if (args.count("no-memory-gate")) request.memory_gate = false;
  const hpo::StudySpec spec = hpo::load_study_spec(request.study_file, request.storage);
  const int n_trials = request.n_trials.value_or(spec.n_trials);

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  ProgressDisplay progress;
  int running = -1;
  trials::TrialObserver observer;
  observer.on_start = [&](const hpo::AskedTrial& asked, const nlohmann::json& params, std::optional<double> best,
                          int finished) {
    running = asked.number;
    progress.start_trial("trial " + std::to_string(asked.number) + " [" + std::to_string(finished + 1) + "/" +
                             std::to_string(n_trials) + "] best " + format_number(best) + "  ",
                         std::max(0, n_trials - finished - 1));
    std::fprintf(stderr, "trial %d%s: %s\n", asked.number, asked.from_queue ? " (queued)" : "", params.dump().c_str());
  };
  observer.on_step = [&](const trials::StepReport& s) { progress.on_step(s.epoch, s.epochs, s.step, s.num_batches, s.loss); };
  observer.on_epoch = [&](const trials::EpochReport& e) {
    progress.on_epoch(e.epoch, e.epochs, e.train_loss, e.validation_loss);
  };
  observer.on_oom = [&](const trials::OomEvent& failed, const std::optional<trials::OomEvent>& next) {
    progress.notice(oom_notice(running, failed, next));
  };
  observer.on_finish = [&](const trials::TrialOutcome& outcome) {
    progress.finish_trial();
    std::fprintf(stderr, "trial %d %s%s%s\n", outcome.number, hpo::to_string(outcome.state),
                 values_text(outcome.values).c_str(),
                 outcome.reason.empty() ? "" : (": " + outcome.reason).c_str());
  };
  const auto summary = trials::optimize_study(request, observer, &g_interrupted);
  report::RunInfo run;
  for (const auto& outcome : summary.outcomes) run.ran.push_back(outcome.number);
  run.recovered = summary.recovered;
  run.n_trials = summary.n_trials;
  run.seconds = summary.seconds;
  run.device = summary.device;
  run.budget_mb = summary.budget_mb;
  run.interrupted = summary.interrupted;
  run.timed_out = summary.timed_out;
  run.metric = summary.metric;
  std::fputs(report::run_summary(spec, summary.trials, run).c_str(), stdout);
  return summary.interrupted ? 128 + g_interrupted.load() : 0;
}

}  // namespace bfhpo::cli
