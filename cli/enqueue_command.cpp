#include "cli/command.hpp"
#include "common/config_reader.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_enqueue(const VerbArgs& args) {
  hpo::StudySpec spec = load_study(args);
  spec.require_search_space("enqueue");
  const std::string file = args["params"].as<std::string>();
  const hpo::Params params = spec.search_space.partial_from_external(read_params_file(file), file);
  hpo::Study study(spec, hpo::make_sampler(spec));
  if (args.count("skip-if-exists")) {
    if (const auto existing = study.trial_with_params(params)) {
      std::cout << nlohmann::json{{"trial", existing->number}, {"state", hpo::to_string(existing->state)},
                                  {"skipped", true}}
                       .dump()
                << std::endl;
      return 0;
    }
  }
  const int number = study.enqueue(params);
  nlohmann::json out{{"trial", number}, {"state", "WAITING"}};
  if (!spec.search_space.is_valid_assignment(params)) {
    nlohmann::json sampled = nlohmann::json::array();
    for (const auto& p : spec.search_space.params()) {
      const bool parent_given = p.condition && params.count(p.condition->parent);
      if (!params.count(p.name) && (!parent_given || spec.search_space.is_active(p, params))) sampled.push_back(p.name);
    }
    out["sampled_when_served"] = sampled;
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
