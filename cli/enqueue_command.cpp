#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <fstream>
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
  std::ifstream in(file);
  if (!in) throw UserError::at(file, "", "cannot open the params file", "check the path");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError::at(file, "", std::string("not valid JSON (") + e.what() + ")", "fix the JSON syntax");
  }
  const nlohmann::json& external = document.contains("params") ? document["params"] : document;
  hpo::Params params = spec.search_space.from_external(external, file);
  hpo::Study study(spec, hpo::make_sampler(spec));
  std::cout << nlohmann::json{{"trial", study.enqueue(params)}, {"state", "WAITING"}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
