#include "cli/command.hpp"
#include "cli/progress_display.hpp"
#include "hpo/study_report.hpp"
#include "trials/optimize.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>

namespace bfhpo::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

std::string value_text(const std::optional<double>& value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", *value);
  return text;
}

void print_summary(const trials::OptimizeSummary& summary, const hpo::StudySpec& spec) {
  const nlohmann::json status = hpo::study_status_json(spec, summary.trials);
  const nlohmann::json& counts = status["counts"];
  std::printf("\nstudy '%s': %d/%d finished (complete %d, pruned %d, fail %d, running %d, waiting %d)\n",
              spec.name.c_str(), status["finished"].get<int>(), summary.n_trials, counts["COMPLETE"].get<int>(),
              counts["PRUNED"].get<int>(), counts["FAIL"].get<int>(), counts["RUNNING"].get<int>(),
              counts["WAITING"].get<int>());
  std::printf("this run: %zu trials in %.1f s on %s, %d pruned for memory (budget %s MB)%s%s\n",
              summary.outcomes.size(), summary.seconds, summary.device.c_str(), summary.pruned_for_memory(),
              summary.budget_mb ? value_text(summary.budget_mb).c_str() : "none",
              summary.interrupted ? ", interrupted" : "", summary.timed_out ? ", timed out" : "");
  if (!summary.recovered.empty()) {
    std::printf("re-queued on start (their worker was gone):");
    for (const int number : summary.recovered) std::printf(" %d", number);
    std::printf("\n");
  }
  for (const auto& outcome : summary.outcomes) {
    if (!outcome.attributes.contains("oom_history") || outcome.attributes["oom_history"].empty()) continue;
    const bool survived = outcome.state != hpo::TrialState::Fail;
    std::printf("  trial %d %s %zu OOMs:", outcome.number, survived ? "survived" : "gave up after",
                outcome.attributes["oom_history"].size());
    for (const auto& e : outcome.attributes["oom_history"]) std::printf(" [%s]", e["config"].get<std::string>().c_str());
    if (survived)
      std::printf(" -> batch %s, chunk %s\n", outcome.attributes.value("batch_size", nlohmann::json()).dump().c_str(),
                  outcome.attributes.value("item_chunk_size", nlohmann::json()).dump().c_str());
    else
      std::printf(" -> FAIL\n");
  }
  if (!summary.best) {
    std::printf("no COMPLETE trial yet\n");
    return;
  }
  const auto& best = *summary.best;
  std::printf("best trial %d: value %s\n  params %s\n", best.number, value_text(best.value).c_str(),
              spec.search_space.to_external(best.params).dump().c_str());
  if (best.user_attrs.contains("diagnostics")) {
    const auto number = [](const nlohmann::json& v) { return v.is_number() ? value_text(v.get<double>()) : "-"; };
    for (const auto& p : best.user_attrs["diagnostics"]["parameters"])
      std::printf("  %-6s calibration error %s  recovery r %s  nrmse %s  contraction %s\n",
                  p["name"].get<std::string>().c_str(), number(p["calibration_error"]).c_str(),
                  number(p["correlation"]).c_str(), number(p["nrmse"]).c_str(), number(p["contraction"]).c_str());
  }
}

}  // namespace

int run_optimize(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo optimize");
  options.add_options()("n-trials", po::value<int>(), "override n_trials (the study's total finished trials)")(
      "timeout", po::value<double>(), "stop starting trials after S seconds")(
      "seed", po::value<uint64_t>(), "override the study's seed")(
      "no-memory-gate", "launch every proposal; OOMs are then handled by the backoff ladder only");
  po::variables_map vm;
  if (!parse_verb_args("optimize", "STUDY.json [--n-trials N] [--timeout S] [--seed S] [--no-memory-gate]", options,
                       args, vm))
    return 0;
  trials::OptimizeOptions request;
  request.study_file = vm["study"].as<std::string>();
  if (vm.count("n-trials")) request.n_trials = vm["n-trials"].as<int>();
  if (vm.count("timeout")) request.timeout_s = vm["timeout"].as<double>();
  if (vm.count("seed")) request.seed = vm["seed"].as<uint64_t>();
  if (vm.count("no-memory-gate")) request.memory_gate = false;
  const hpo::StudySpec spec = hpo::load_study_spec(request.study_file);
  const int n_trials = request.n_trials.value_or(spec.n_trials);

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  ProgressDisplay progress("");
  int started = 0;
  trials::TrialObserver observer;
  observer.on_start = [&](const hpo::AskedTrial& asked, const nlohmann::json& params, std::optional<double> best) {
    progress.set_prefix("trial " + std::to_string(asked.number) + " [" + std::to_string(++started) + " of up to " +
                        std::to_string(n_trials) + "] best " + value_text(best) + " ");
    std::fprintf(stderr, "trial %d%s: %s\n", asked.number, asked.from_queue ? " (queued)" : "", params.dump().c_str());
  };
  observer.on_step = [&](const trials::StepReport& s) { progress.on_step(s.epoch, s.epochs, s.step, s.num_batches, s.loss); };
  observer.on_epoch = [&](const trials::EpochReport& e) {
    progress.on_epoch(e.epoch, e.epochs, e.train_loss, e.validation_loss);
  };
  observer.on_finish = [&](const trials::TrialOutcome& outcome) {
    progress.finish();
    std::fprintf(stderr, "trial %d %s%s%s\n", outcome.number, hpo::to_string(outcome.state),
                 outcome.value ? (" value " + value_text(outcome.value)).c_str() : "",
                 outcome.reason.empty() ? "" : (" (" + outcome.reason + ")").c_str());
  };
  const auto summary = trials::optimize_study(request, observer, &g_interrupted);
  print_summary(summary, spec);
  return summary.interrupted ? 130 : 0;
}

}  // namespace bfhpo::cli
