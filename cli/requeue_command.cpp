#include "cli/command.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_requeue(const VerbArgs& args) {
  hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, nullptr, hpo::Study::Open::MustExist);
  const int number = args["trial"].as<int>();
  const int waiting = study.requeue(number);
  std::cout << nlohmann::json{{"trial", number}, {"state", "FAIL"}, {"requeued_as", waiting}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
