#include "cli/command.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_requeue(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo requeue");
  options.add_options()("trial", po::value<int>()->required(), "the RUNNING trial to release");
  po::variables_map vm;
  if (!parse_verb_args("requeue", "STUDY.json --trial N", options, args, vm)) return 0;
  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  hpo::Study study(spec, nullptr, hpo::Study::Open::MustExist);
  const int number = vm["trial"].as<int>();
  const int waiting = study.requeue(number);
  std::cout << nlohmann::json{{"trial", number}, {"state", "FAIL"}, {"requeued_as", waiting}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
