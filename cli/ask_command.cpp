#include "cli/command.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_ask(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo ask");
  po::variables_map vm;
  if (!parse_verb_args("ask", "STUDY.json", options, args, vm)) return 0;
  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  hpo::Study study(spec, hpo::make_sampler(spec));
  hpo::AskedTrial asked = study.ask();
  std::cout << nlohmann::json{{"trial", asked.number}, {"params", spec.search_space.to_external(asked.params)}}.dump()
            << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
