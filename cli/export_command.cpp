#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "trials/export.hpp"

#include <fstream>
#include <iostream>

namespace bfhpo::cli {

int run_export(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo export");
  options.add_options()("best", "with json: only the best trial (params, value, attributes; for a training "
                                "study also its complete configuration and weights)")(
      "format", po::value<std::string>()->default_value("json"),
      "json, csv (every trial, one row each) or bayesflow (the best configuration as BayesFlow arguments)")(
      "output,o", po::value<std::string>(), "write to this file instead of stdout");
  po::variables_map vm;
  if (!parse_verb_args("export", "STUDY.json [--best] [--format json|csv|bayesflow] [-o FILE]", options, args, vm))
    return 0;
  const std::string format = vm["format"].as<std::string>();
  if (format != "json" && format != "csv" && format != "bayesflow")
    throw UserError("bfhpo export: --format '" + format + "' is unknown. Fix: use json, csv or bayesflow");

  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
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
  } else if (vm.count("best")) {
    text = (spec.has_simulator() ? trials::best_configuration_json(spec, trials) : hpo::best_trial_json(spec, trials))
               .dump(2) + "\n";
  } else {
    text = hpo::study_status_json(spec, trials).dump(2) + "\n";
  }
  if (!vm.count("output")) {
    std::cout << text;
    return 0;
  }
  const std::string path = vm["output"].as<std::string>();
  std::ofstream out(path);
  if (!(out << text)) throw UserError::at(path, "", "cannot write the export", "check the folder exists and is writable");
  return 0;
}

}  // namespace bfhpo::cli
