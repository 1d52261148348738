#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "trials/export.hpp"

#include <iostream>
#include <optional>

namespace bfhpo::cli {

int run_export(const VerbArgs& args) {
  const std::string format = args["format"].as<std::string>();
  if (format != "json" && format != "csv" && format != "bayesflow")
    throw UserError("bfhpo export: --format '" + format + "' is unknown. Fix: use json, csv or bayesflow");

  std::optional<double> budget_mb;
  if (args.count("budget-mb")) {
    budget_mb = args["budget-mb"].as<double>();
    if (!(*budget_mb > 0.0))
      throw UserError("bfhpo export: --budget-mb " + format_exact(*budget_mb) + " is not a memory size. Fix: give " +
                      "the device's memory in MB, e.g. 24576 for a 24 GB card");
    if (!args.count("best") && format != "bayesflow")
      throw UserError("bfhpo export: --budget-mb chooses the best trial that fits; it needs --best or --format "
                      "bayesflow. Fix: add --best");
  }
  hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  std::string text;
  if (format == "csv") {
    text = hpo::trials_csv(spec, trials);
  } else if (format == "bayesflow") {
    if (!spec.has_simulator())
      throw UserError::at(spec.source.string(), "simulator", "--format bayesflow needs a training study",
                          "add the simulator, training and approximator sections, or use --format json");
    text = trials::bayesflow_json(spec, trials, budget_mb).dump(2) + "\n";
  } else if (args.count("best")) {
    if (budget_mb && !spec.has_simulator())
      throw UserError::at(spec.source.string(), "simulator", "--budget-mb needs a training study: only its trials "
                          "record their memory peak", "leave out --budget-mb");
    text = (spec.has_simulator() ? trials::best_configuration_json(spec, trials, budget_mb)
                                 : hpo::best_trial_json(spec, trials))
               .dump(2) + "\n";
  } else {
    text = hpo::study_status_json(spec, trials).dump(2) + "\n";
  }
  if (!args.count("output")) {
    std::cout << text;
    return 0;
  }
  write_file_atomically(args["output"].as<std::string>(), text);
  return 0;
}

}  // namespace bfhpo::cli
