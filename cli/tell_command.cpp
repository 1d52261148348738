#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <cmath>
#include <cstdlib>
#include <regex>
#include <iostream>

namespace bfhpo::cli {
namespace {

// A plain decimal number: 0.25, -3, 1e-4. Not hex (0x10), not inf or nan.
// `option` names it in messages ("--value").
double parse_value(const std::string& text, const std::string& option) {
  static const std::regex decimal(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  static const std::regex special(R"([+-]?(inf|infinity|nan))", std::regex::icase);
  const bool is_special = std::regex_match(text, special);
  if (!is_special && !std::regex_match(text, decimal))
    throw UserError("bfhpo tell: " + option + " '" + text + "' is not a number. Fix: pass a decimal number, e.g. " +
                    option + " 0.25");
  const double value = is_special ? std::nan("") : std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value))
    throw UserError("bfhpo tell: " + option + " '" + text + "' is not finite; a COMPLETE trial needs finite values. "
                    "Fix: pass finite numbers, or --state fail for a trial whose objective could not be computed");
  return value;
}

// "0.25,-3" -> {0.25, -3}.
std::vector<double> parse_list(const std::string& text, const std::string& option) {
  std::vector<double> values;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    values.push_back(parse_value(text.substr(begin, comma - begin), option));
    if (comma == std::string::npos) return values;
    begin = comma + 1;
  }
}

}  // namespace

int run_tell(const VerbArgs& args) {
  if (args.count("value") && args.count("values"))
    throw UserError("bfhpo tell: --value is the value of a study of one objective, --values those of several. "
                    "Fix: give one of them");
  std::vector<double> values;
  if (args.count("value")) values = {parse_value(args["value"].as<std::string>(), "--value")};
  if (args.count("values")) values = parse_list(args["values"].as<std::string>(), "--values");
  std::optional<std::vector<double>> constraints;
  if (args.count("constraints")) constraints = parse_list(args["constraints"].as<std::string>(), "--constraints");
  hpo::TrialState state = hpo::TrialState::Complete;
  if (args.count("state")) {
    const std::string s = args["state"].as<std::string>();
    if (s == "complete") state = hpo::TrialState::Complete;
    else if (s == "pruned") state = hpo::TrialState::Pruned;
    else if (s == "fail") state = hpo::TrialState::Fail;
    else throw UserError("bfhpo tell: --state '" + s + "' is unknown. Fix: use complete, pruned or fail");
  }
  if (args.count("step")) {
    if (args.count("state"))
      throw UserError("bfhpo tell: --step reports an intermediate value and --state finishes the trial. "
                      "Fix: give one of them (report with --step S --value V, then finish with a second tell)");
    if (!args.count("value")) throw UserError("bfhpo tell: --step needs --value. Fix: pass --step S --value V");
    if (args["step"].as<int>() < 0)
      throw UserError("bfhpo tell: --step " + std::to_string(args["step"].as<int>()) +
                      " is negative. Fix: give the step (epoch) as 0 or more");
  } else if (state == hpo::TrialState::Complete && values.empty()) {
    throw UserError("bfhpo tell: a complete trial needs --value (--values for several objectives). "
                    "Fix: pass --value V or --state pruned|fail");
  } else if (state != hpo::TrialState::Complete && !values.empty()) {
    throw UserError("bfhpo tell: a " + std::string(hpo::to_string(state)) +
                    " trial takes no value (Optuna refuses it too). Fix: drop --value, or drop --state to complete it");
  }

  hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, hpo::make_sampler(spec), hpo::Study::Open::MustExist);
  const int number = args["trial"].as<int>();
  if (args.count("step")) {
    study.report(number, args["step"].as<int>(), values.front());
    const bool prune = study.should_prune(number).prune;
    std::cout << nlohmann::json{{"trial", number}, {"should_prune", prune}}.dump() << std::endl;
    return 0;
  }
  study.tell(number, state, values, "", constraints);
  std::cout << nlohmann::json{{"trial", number}, {"state", hpo::to_string(state)}}.dump() << std::endl;
  return 0;
}

}  // namespace bfhpo::cli
