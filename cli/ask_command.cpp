#include "cli/command.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_ask(const VerbArgs& args) {
  hpo::StudySpec spec = load_study(args);
  spec.require_search_space("ask");
  hpo::Study study(spec, hpo::make_sampler(spec));
  hpo::AskedTrial asked = study.ask();
  std::cout << nlohmann::json{{"trial", asked.number}, {"params", spec.search_space.to_external(asked.params)}}.dump()
            << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
