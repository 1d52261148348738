#include "cli/command.hpp"
#include "common/config_reader.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_enqueue(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo enqueue");
  options.add_options()("params", po::value<std::string>()->required(),
                        "a JSON file {\"name\": value, ...} (what export --best writes, or its \"params\")");
  po::variables_map vm;
  if (!parse_verb_args("enqueue", "STUDY.json --params PARAMS.json", options, args, vm)) return 0;
  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  const std::string file = vm["params"].as<std::string>();
  hpo::Params params = spec.search_space.from_external(read_params_file(file), file);
  hpo::Study study(spec, hpo::make_sampler(spec));
  std::cout << nlohmann::json{{"trial", study.enqueue(params)}, {"state", "WAITING"}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
