#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <cmath>
#include <iostream>

namespace bfhpo::cli {

int run_tell(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo tell");
  options.add_options()("trial", po::value<int>()->required(), "the trial number printed by ask")(
      "value", po::value<std::string>(), "the objective value (the trial becomes COMPLETE)")(
      "state", po::value<std::string>(), "complete|pruned|fail (default complete with --value)")(
      "step", po::value<int>(), "report --value as the intermediate value of this step instead of finishing");
  po::variables_map vm;
  if (!parse_verb_args("tell", "STUDY.json --trial N (--value V | --state pruned|fail)", options, args, vm)) return 0;

  std::optional<double> value;
  if (vm.count("value")) {
    const std::string text = vm["value"].as<std::string>();
    try {
      std::size_t used = 0;
      value = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception&) {
      throw UserError("bfhpo tell: --value '" + text + "' is not a number. Fix: pass e.g. --value 0.25");
    }
  }
  hpo::TrialState state = hpo::TrialState::Complete;
  if (vm.count("state")) {
    const std::string s = vm["state"].as<std::string>();
    if (s == "complete") state = hpo::TrialState::Complete;
    else if (s == "pruned") state = hpo::TrialState::Pruned;
    else if (s == "fail") state = hpo::TrialState::Fail;
    else throw UserError("bfhpo tell: --state '" + s + "' is unknown. Fix: use complete, pruned or fail");
  }
  if (state == hpo::TrialState::Complete && !value && !vm.count("step"))
    throw UserError("bfhpo tell: a complete trial needs --value. Fix: pass --value V or --state pruned|fail");

  hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  hpo::Study study(spec, hpo::make_sampler(spec), hpo::Study::Open::MustExist);
  const int number = vm["trial"].as<int>();
  if (vm.count("step")) {
    if (!value) throw UserError("bfhpo tell: --step needs --value. Fix: pass --step S --value V");
    study.report(number, vm["step"].as<int>(), *value);
    const bool prune = study.should_prune(number);
    std::cout << nlohmann::json{{"trial", number}, {"should_prune", prune}}.dump() << std::endl;
    return 0;
  }
  study.tell(number, state, value);
  std::cout << nlohmann::json{{"trial", number}, {"state", hpo::to_string(state)}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
