#include "cli/command.hpp"
#include "common/config_reader.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_enqueue(const VerbArgs& args) {
  hpo::StudySpec spec = load_study(args);
  const std::string file = args["params"].as<std::string>();
  hpo::Params params = spec.search_space.from_external(read_params_file(file), file);
  hpo::Study study(spec, hpo::make_sampler(spec));
  std::cout << nlohmann::json{{"trial", study.enqueue(params)}, {"state", "WAITING"}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
