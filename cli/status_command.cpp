#include "cli/command.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "report/memory_frontier.hpp"
#include "report/status_table.hpp"
#include "report/trial_facts.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_status(const VerbArgs& args) {
  hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  const auto levels = report::parse_memory_levels_gb(args["memory-levels"].as<std::string>(), "bfhpo status: --memory-levels");
  // RUNNING trials nobody is working on any more (a dead ask/tell caller, a
  // worker gone): shown with the way to release them.
  nlohmann::json abandoned = nlohmann::json::array();
  const double now = hpo::unix_seconds_now();
  for (const auto& t : trials)
    if (const std::string reason = hpo::abandoned_reason(t, spec.stale_after_s, now); !reason.empty())
      abandoned.push_back({{"number", t.number}, {"reason", reason}});
  if (args.count("json")) {
    nlohmann::json status = hpo::study_status_json(spec, trials);
    status["abandoned"] = abandoned;
    status["memory_frontier"] = report::memory_frontier_json(
        report::memory_frontier(
        report::frontier_candidates(report::trial_facts(trials, report::ranked_objective(spec))),
        report::ranked_direction(spec), levels));
    std::cout << status.dump(2) << std::endl;
    return 0;
  }
  std::cout << report::status_table(spec, trials, levels);
  for (const auto& t : abandoned)
    std::cout << "trial " << t["number"] << " is RUNNING but looks abandoned (" << t["reason"].get<std::string>()
              << "): release it with `bfhpo requeue " << spec.source.string() << " --trial " << t["number"]
              << "` (its params run again) or `bfhpo tell ... --trial " << t["number"] << " --state fail`\n";
  return 0;
}

}  // namespace bfhpo::cli
