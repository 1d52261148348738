#include "cli/command.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_status(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo status");
  options.add_options()("json", "print the status as one JSON object");
  po::variables_map vm;
  if (!parse_verb_args("status", "STUDY.json [--json]", options, args, vm)) return 0;
  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  if (vm.count("json")) std::cout << hpo::study_status_json(spec, trials).dump(2) << std::endl;
  else std::cout << hpo::study_status_table(spec, trials);
  return 0;
}

}  // namespace bfhpo::cli
