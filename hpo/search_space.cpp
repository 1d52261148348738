#include "hpo/search_space.hpp"

#include "common/config_reader.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <set>
#include <stdexcept>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

// Int bounds stay exact in the internal representation (a double).
constexpr int64_t kMaxExactInteger = int64_t{1} << 53;

std::string number_text(double x) {
  std::ostringstream out;
  out << std::setprecision(12) << x;
  return out.str();
}

// Optuna shrinks a range that is not a whole number of steps, with a warning;
// a study file is fixed text, so bfhpo refuses it and names the high Optuna would use.
std::optional<ConfigProblem> step_problem(double low, double high, double step) {
  const double steps = (high - low) / step;
  const double whole = std::floor(steps + 1e-9);
  if (whole < 1)
    return ConfigProblem{"step", "step " + number_text(step) + " exceeds the range [" + number_text(low) + ", " +
                                     number_text(high) + "], so low is the only value",
                         "make step at most high - low, or fix the value as a study default instead of searching it"};
  if (std::abs(steps - std::round(steps)) > 1e-9 * std::max(1.0, steps))
    return ConfigProblem{"high", "the range [" + number_text(low) + ", " + number_text(high) +
                                     "] is not a whole number of steps of " + number_text(step) +
                                     " (Optuna would shrink high to " + number_text(low + whole * step) + ")",
                         "set high to " + number_text(low + whole * step) + " or choose a step that divides the range"};
  return std::nullopt;
}

std::optional<ConfigProblem> range_problem(double low, double high, bool log) {
  if (low >= high)
    return ConfigProblem{"low", "low (" + number_text(low) + ") must be below high (" + number_text(high) + ")",
                         "make low < high, or fix the value as a study default instead of searching it"};
  if (log && low <= 0)
    return ConfigProblem{"low", "a log-scaled range needs low > 0", "set low to a positive value or drop \"log\""};
  return std::nullopt;
}

std::optional<ConfigProblem> problem(const FloatDistribution& d) {
  if (auto range = range_problem(d.low, d.high, d.log)) return range;
  if (!d.step) return std::nullopt;
  if (d.log) return ConfigProblem{"step", "step cannot be combined with log", "drop one of \"step\" or \"log\""};
  if (!(*d.step > 0)) return ConfigProblem{"step", "step must be positive", "set step > 0"};
  return step_problem(d.low, d.high, *d.step);
}

std::optional<ConfigProblem> problem(const IntDistribution& d) {
  if (auto range = range_problem(static_cast<double>(d.low), static_cast<double>(d.high), d.log)) return range;
  if (d.log && d.step != 1) return ConfigProblem{"step", "step cannot be combined with log", "drop one of them"};
  return step_problem(static_cast<double>(d.low), static_cast<double>(d.high), static_cast<double>(d.step));
}

double required_number(ConfigSection& param, const char* key) {
  const auto value = param.number(key);
  if (!value) throw param.error(key, "missing", std::string("add \"") + key + "\": <number>");
  return *value;
}

int64_t required_integer(ConfigSection& param, const char* key) {
  const auto value = param.integer(key, -kMaxExactInteger, kMaxExactInteger);
  if (!value) throw param.error(key, "missing", std::string("add \"") + key + "\": <integer>");
  return *value;
}

FloatDistribution parse_float(ConfigSection& param) {
  FloatDistribution d;
  d.low = required_number(param, "low");
  d.high = required_number(param, "high");
  d.log = param.boolean("log").value_or(false);
  if (const json* step = param.find("step"); step && !step->is_null())
    d.step = config_number(*step, param.source(), param.field("step"));
  param.check(problem(d));
  return d;
}

IntDistribution parse_int(ConfigSection& param) {
  IntDistribution d;
  d.low = required_integer(param, "low");
  d.high = required_integer(param, "high");
  d.log = param.boolean("log").value_or(false);
  d.step = param.integer("step", 1, kMaxExactInteger).value_or(1);
  param.check(problem(d));
  return d;
}

CategoricalDistribution parse_categorical(ConfigSection& param) {
  const json* choices = param.find("choices");
  if (!choices || !choices->is_array() || choices->empty())
    throw param.error("choices", "missing or empty", "add \"choices\": [\"a\", \"b\"]");
  CategoricalDistribution d;
  for (const json& choice : *choices) {
    if (!(choice.is_string() || choice.is_number() || choice.is_boolean() || choice.is_null()))
      throw param.error("choices", "choice " + choice.dump() + " is not a string, number, boolean or null",
                        "use scalar choices");
    for (const json& seen : d.choices)
      if (seen == choice) throw param.error("choices", "duplicate choice " + choice.dump(), "list each choice once");
    d.choices.push_back(choice);
  }
  return d;
}

std::optional<ParamCondition> parse_condition(ConfigSection& param) {
  const json* when = param.find("when");
  if (!when) return std::nullopt;
  if (!when->is_object() || when->size() != 1)
    throw param.error("when", "must be an object with one parameter, e.g. {\"kind\": \"b\"}",
                      "write \"when\": {\"<parent>\": <value or [values]>}");
  ParamCondition condition;
  condition.parent = when->begin().key();
  const json& values = when->begin().value();
  if (values.is_array()) {
    if (values.empty()) throw param.error("when", "the list of parent values is empty", "list at least one value");
    for (const json& v : values) condition.values.push_back(v);
  } else {
    condition.values.push_back(values);
  }
  return condition;
}

}  // namespace

SearchSpace::SearchSpace(std::vector<ParamSpec> params) {
  // Order parents before children, keeping the given order otherwise.
  std::set<std::string> names;
  for (const auto& p : params) names.insert(p.name);
  for (const auto& p : params)
    if (p.condition && !names.count(p.condition->parent))
      throw std::invalid_argument("parameter '" + p.name + "' depends on unknown '" + p.condition->parent + "'");
  std::set<std::string> placed;
  while (params_.size() < params.size()) {
    bool progressed = false;
    for (const auto& p : params) {
      if (placed.count(p.name)) continue;
      if (p.condition && !placed.count(p.condition->parent)) continue;
      params_.push_back(p);
      placed.insert(p.name);
      progressed = true;
    }
    if (!progressed) throw std::invalid_argument("the search space's 'when' conditions form a cycle");
  }
}

SearchSpace SearchSpace::from_json(const json& search_space, const std::string& source) {
  if (!search_space.is_object())
    throw UserError::at(source, "search_space", "expected an object {\"name\": {\"type\": ...}, ...}",
                        "write \"search_space\": {\"lr\": {\"type\": \"float\", \"low\": 1e-4, \"high\": 1e-1, \"log\": true}}");
  std::vector<ParamSpec> params;
  for (const auto& item : search_space.items()) {
    ConfigSection param(item.value(), source, "search_space." + item.key());
    const auto type = param.choice("type", {"float", "int", "categorical"});
    if (!type) throw param.error("type", "missing", "add \"type\": \"float\", \"int\" or \"categorical\"");
    ParamSpec spec;
    spec.name = item.key();
    if (*type == "float") spec.distribution = parse_float(param);
    else if (*type == "int") spec.distribution = parse_int(param);
    else spec.distribution = parse_categorical(param);
    spec.condition = parse_condition(param);
    param.reject_unknown_keys();
    params.push_back(std::move(spec));
  }
  for (const auto& param : params) {
    if (!param.condition) continue;
    const std::string field = "search_space." + param.name + ".when";
    auto parent = std::find_if(params.begin(), params.end(),
                               [&](const ParamSpec& p) { return p.name == param.condition->parent; });
    if (parent == params.end())
      throw UserError::at(source, field, "names unknown parameter '" + param.condition->parent + "'",
                          "name a parameter defined in search_space");
    const auto* float_parent = std::get_if<FloatDistribution>(&parent->distribution);
    if (float_parent && !float_parent->step)
      throw UserError::at(source, field,
                          "'" + parent->name + "' is a continuous float: it takes any given value with probability 0, "
                          "so '" + param.name + "' would never exist",
                          "make '" + parent->name + "' categorical or int (or give it a step)");
    for (const json& value : param.condition->values) {
      try {
        if (!contains(parent->distribution, to_internal(parent->distribution, value)))
          throw std::invalid_argument("outside its range");
      } catch (const std::invalid_argument& e) {
        throw UserError::at(source, field, "value " + value.dump() + " is not a value of '" + parent->name + "' (" +
                                               e.what() + ")",
                            "use one of the parent's values");
      }
    }
  }
  try {
    return SearchSpace(std::move(params));
  } catch (const std::invalid_argument& e) {
    throw UserError::at(source, "search_space", e.what(), "remove the circular \"when\"");
  }
}

json SearchSpace::to_json() const {
  json out = json::object();
  for (const auto& p : params_) {
    json spec = json::parse(distribution_to_optuna_json(p.distribution));
    if (p.condition) spec["when"] = {{p.condition->parent, p.condition->values}};
    out[p.name] = spec;
  }
  return out;
}

const ParamSpec* SearchSpace::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

bool SearchSpace::is_active(const ParamSpec& spec, const Params& assigned) const {
  if (!spec.condition) return true;
  auto value = assigned.find(spec.condition->parent);
  if (value == assigned.end()) return false;
  const ParamSpec* parent = find(spec.condition->parent);
  for (const json& enabling : spec.condition->values)
    if (to_internal(parent->distribution, enabling) == value->second) return true;
  return false;
}

std::vector<std::string> SearchSpace::active_names(const Params& assignment) const {
  std::vector<std::string> names;
  for (const auto& p : params_)
    if (is_active(p, assignment)) names.push_back(p.name);
  return names;
}

bool SearchSpace::is_valid_assignment(const Params& params) const {
  std::size_t active = 0;
  for (const auto& p : params_) {
    auto it = params.find(p.name);
    bool should_exist = is_active(p, params);
    if (should_exist != (it != params.end())) return false;
    if (should_exist) {
      if (!contains(p.distribution, it->second)) return false;
      ++active;
    }
  }
  return active == params.size();
}

json SearchSpace::to_external(const Params& params) const {
  json out = json::object();
  for (const auto& p : params_) {
    auto it = params.find(p.name);
    if (it != params.end()) out[p.name] = hpo::to_external(p.distribution, it->second);
  }
  return out;
}

Params SearchSpace::from_external(const json& external, const std::string& source) const {
  Params params = partial_from_external(external, source);
  for (const auto& p : params_)
    if (is_active(p, params) && !params.count(p.name))
      throw UserError::at(source, "params." + p.name, "missing", "give a value for every active parameter");
  return params;
}

Params SearchSpace::partial_from_external(const json& external, const std::string& source) const {
  if (!external.is_object())
    throw UserError::at(source, "params", "must be an object {\"name\": value, ...}", "write a JSON object");
  Params params;
  for (const auto& item : external.items()) {
    const ParamSpec* spec = find(item.key());
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& p : params_) names.push_back(p.name);
      throw UserError::at(source, "params." + item.key(), "not in the study's search space",
                          "did you mean '" + closest_name(item.key(), names) + "'? (or add it to search_space)");
    }
    try {
      double internal = to_internal(spec->distribution, item.value());
      if (!contains(spec->distribution, internal))
        throw std::invalid_argument(item.value().dump() + " is outside the parameter's range");
      params[item.key()] = internal;
    } catch (const std::invalid_argument& e) {
      throw UserError::at(source, "params." + item.key(), e.what(), "use a value inside the search space");
    }
  }
  for (const auto& p : params_) {
    const bool parent_given = !p.condition || params.count(p.condition->parent);
    if (parent_given && !is_active(p, params) && params.count(p.name))
      throw UserError::at(source, "params." + p.name, "is inactive: its \"when\" condition does not hold",
                          "remove it");
  }
  return params;
}

void SearchSpace::check_compatible(const TrialSpan& trials, const std::string& source) const {
  for (const auto& param : params_) {
    for (const auto& trial : trials) {
      const auto recorded = trial.distributions.find(param.name);
      if (recorded == trial.distributions.end()) continue;
      if (const auto why = incompatibility(recorded->second, param.distribution))
        throw UserError::at(source, "search_space." + param.name,
                            "changed incompatibly under the same study name: trial " + std::to_string(trial.number) +
                                " " + *why + " (Optuna refuses this too)",
                            "restore the parameter's distribution, or give the changed study a new \"name\" "
                            "(or \"storage\"); a changed range alone is fine");
      break;  // one recorded distribution a name: the journal holds no incompatible pair
    }
  }
}

}  // namespace bfhpo::hpo
