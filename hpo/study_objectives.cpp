#include "hpo/study_objectives.hpp"

#include "common/decimal_number.hpp"
#include "common/number_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

namespace bfhpo::hpo {

using nlohmann::json;

std::string ConstraintSpec::text() const {
  return metric + (at_most ? " <= " : " >= ") + format_number(bound);
}

std::vector<ObjectiveSpec> parse_objectives(ConfigSection& top) {
  const std::vector<std::string> directions = {"minimize", "maximize"};
  const auto direction_of = [](const std::string& text) {
    return text == "maximize" ? StudyDirection::Maximize : StudyDirection::Minimize;
  };
  const json* listed = top.find("objectives");
  if (!listed) {
    ObjectiveSpec single;
    if (const auto direction = top.choice("direction", directions)) single.direction = direction_of(*direction);
    return {single};
  }
  for (const char* single : {"direction", "objective"})
    if (top.find(single))
      throw top.error(single, "given beside \"objectives\", which names every objective with its direction",
                      std::string("drop \"") + single + "\" and give each objective in \"objectives\"");
  const std::string example = "write e.g. \"objectives\": [{\"metric\": \"val_nll\", \"direction\": \"minimize\"}, "
                              "{\"metric\": \"measured_peak_mb\", \"direction\": \"minimize\"}]";
  if (!listed->is_array() || listed->empty())
    throw top.error("objectives", "expected a non-empty list of objectives, got " + listed->dump(), example);
  std::vector<ObjectiveSpec> objectives;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < listed->size(); ++i) {
    ConfigSection entry((*listed)[i], top.source(), top.field("objectives") + "[" + std::to_string(i) + "]");
    ObjectiveSpec objective;
    const auto metric = entry.string("metric");
    const auto direction = entry.choice("direction", directions);
    entry.reject_unknown_keys();
    if (!metric) throw entry.error("metric", "missing", example);
    if (!direction) throw entry.error("direction", "missing", "write \"direction\": \"minimize\" or \"maximize\"");
    objective.metric = *metric;
    objective.direction = direction_of(*direction);
    if (!seen.insert(objective.metric).second)
      throw entry.error("metric", "\"" + objective.metric + "\" is already an objective",
                        "name each metric once");
    objectives.push_back(objective);
  }
  return objectives;
}

std::vector<ConstraintSpec> parse_constraints(ConfigSection& top) {
  const json* listed = top.find("constraints");
  if (!listed) return {};
  const std::string example = "write e.g. \"constraints\": [\"calibration_error <= 0.02\"]";
  if (!listed->is_array()) throw top.error("constraints", "expected a list, got " + listed->dump(), example);
  static const std::regex form(R"(^\s*([A-Za-z_][A-Za-z0-9_.:]*)\s*(<=|>=)\s*(\S+)\s*$)");
  std::vector<ConstraintSpec> constraints;
  for (std::size_t i = 0; i < listed->size(); ++i) {
    const std::string field = "constraints[" + std::to_string(i) + "]";
    const json& item = (*listed)[i];
    std::smatch parts;
    const std::string text = item.is_string() ? item.get<std::string>() : std::string();
    if (!item.is_string() || !std::regex_match(text, parts, form))
      throw top.error(field, "expected \"metric <= number\" or \"metric >= number\", got " + item.dump(), example);
    const auto bound = parse_decimal(parts[3].str());
    if (!bound || !std::isfinite(*bound))
      throw top.error(field, "the bound '" + parts[3].str() + "' is not a plain decimal number (not hex such as 0x10, "
                             "not inf or nan), as `bfhpo tell` reads numbers",
                      example);
    constraints.push_back({parts[1].str(), parts[2].str() == "<=", *bound});
  }
  return constraints;
}

std::vector<double> constraint_values(const FrozenTrial& trial) {
  std::vector<double> values;
  const auto number = [](const json& v) { return v.is_number() ? v.get<double>() : std::nan(""); };
  if (const auto listed = trial.system_attrs.find(kConstraintsAttr);
      listed != trial.system_attrs.end() && listed->is_array())
    for (const json& v : *listed) values.push_back(number(v));
  const std::string prefix = std::string(kConstraintsAttr) + ":";
  for (const auto& [key, v] : trial.system_attrs.items())
    if (key.compare(0, prefix.size(), prefix) == 0) values.push_back(number(v));
  return values;
}

bool has_constraints(const std::vector<FrozenTrial>& trials) {
  return std::any_of(trials.begin(), trials.end(), [](const FrozenTrial& t) { return !constraint_values(t).empty(); });
}

bool is_feasible(const FrozenTrial& trial) {
  const std::vector<double> values = constraint_values(trial);
  return std::all_of(values.begin(), values.end(), [](double v) { return v <= 0.0; });
}

}  // namespace bfhpo::hpo
