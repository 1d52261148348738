#include "cli/command.hpp"
#include "common/decimal_number.hpp"
#include "common/user_error.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <cmath>
#include <cstdlib>
#include <regex>
#include <iostream>

namespace bfhpo::cli {
namespace {

// A plain decimal number, or inf or nan: 0.25, -3, 1e-4, -inf. Not hex (0x10).
// `option` names it in messages ("--value").
double parse_number(const std::string& text, const std::string& option) {
  static const std::regex special(R"([+-]?(inf|infinity|nan))", std::regex::icase);
  if (std::regex_match(text, special)) return std::strtod(text.c_str(), nullptr);
  const auto value = parse_decimal(text);
  if (!value)
    throw UserError("bfhpo tell: " + option + " '" + text + "' is not a number. Fix: pass a decimal number, e.g. " +
                    option + " 0.25");
  return *value;
}

// An objective's value: a finite number.
double parse_value(const std::string& text, const std::string& option) {
  const double value = parse_number(text, option);
  if (!std::isfinite(value))
    throw UserError("bfhpo tell: " + option + " '" + text + "' is not finite; a COMPLETE trial needs finite values. "
                    "Fix: pass finite numbers, or --state fail for a trial whose objective could not be computed");
  return value;
}

// A constraint's value (Optuna's): <= 0 when met, inf when missed by any
// amount; not NaN, which says neither and which Optuna refuses too.
double parse_constraint(const std::string& text, const std::string& option) {
  const double value = parse_number(text, option);
  if (std::isnan(value))
    throw UserError("bfhpo tell: " + option + " '" + text + "': NaN says neither met nor missed, and Optuna refuses "
                    "NaN constraint values too. Fix: pass each constraint's value: <= 0 when met, else by how much it "
                    "is missed (inf: missed)");
  return value;
}

// "0.25,-3" -> {0.25, -3}, each read by `parse`.
std::vector<double> parse_list(const std::string& text, const std::string& option,
                               double (*parse)(const std::string&, const std::string&)) {
  std::vector<double> values;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    values.push_back(parse(text.substr(begin, comma - begin), option));
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
  if (args.count("values")) values = parse_list(args["values"].as<std::string>(), "--values", parse_value);
  std::optional<std::vector<double>> constraints;
  if (args.count("constraints"))
    constraints = parse_list(args["constraints"].as<std::string>(), "--constraints", parse_constraint);
  hpo::TrialState state = hpo::TrialState::Complete;
  if (args.count("state")) {
    const std::string s = args["state"].as<std::string>();
    if (s == "complete") state = hpo::TrialState::Complete;
    else if (s == "pruned") state = hpo::TrialState::Pruned;
    else if (s == "fail") state = hpo::TrialState::Fail;
    else throw UserError("bfhpo tell: --state '" + s + "' is unknown. Fix: use complete, pruned or fail");
  }
  if (args.count("step")) {
    if (constraints)
      throw UserError("bfhpo tell: --constraints go with the trial's last tell, not with an intermediate value. "
                      "Fix: drop --constraints here and pass them when you finish the trial");
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
  if (constraints && !spec.constraints.empty())
    throw UserError::at(spec.source.string(), "constraints",
                        "states the study's constraints, from which bfhpo computes each trial's constraint values; "
                        "--constraints would replace them",
                        "drop --constraints (or drop \"constraints\" from the study file to pass every trial's own)");
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
