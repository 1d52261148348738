#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "trials/export.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_export(const VerbArgs& args) {
  const std::string format = args["format"].as<std::string>();
  if (format != "json" && format != "csv" && format != "bayesflow")
    throw UserError("bfhpo export: --format '" + format + "' is unknown. Fix: use json, csv or bayesflow");

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
    text = trials::bayesflow_json(spec, trials).dump(2) + "\n";
  } else if (args.count("best")) {
    text = (spec.has_simulator() ? trials::best_configuration_json(spec, trials) : hpo::best_trial_json(spec, trials))
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
