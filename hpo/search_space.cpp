#include "hpo/search_space.hpp"

#include "common/user_error.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

const std::set<std::string> kFloatKeys{"type", "low", "high", "log", "step", "when"};
const std::set<std::string> kIntKeys{"type", "low", "high", "log", "step", "when"};
const std::set<std::string> kCategoricalKeys{"type", "choices", "when"};

class FieldReader {
 public:
  FieldReader(const json& spec, std::string source, std::string field)
      : spec_(spec), source_(std::move(source)), field_(std::move(field)) {}

  UserError error(const std::string& key, const std::string& problem, const std::string& fix) const {
    return UserError::at(source_, key.empty() ? field_ : field_ + "." + key, problem, fix);
  }

  void reject_unknown_keys(const std::set<std::string>& allowed) const {
    for (const auto& item : spec_.items())
      if (!allowed.count(item.key()))
        throw error(item.key(), "unknown key for a '" + spec_["type"].get<std::string>() + "' parameter",
                    "remove it or use one of: " + join(allowed));
  }

  double number(const std::string& key) const {
    if (!spec_.contains(key)) throw error(key, "missing", "add \"" + key + "\": <number>");
    const json& v = spec_[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw error(key, "must be a finite number, got " + v.dump(), "write a number such as 0.1");
    return v.get<double>();
  }

  long long integer(const std::string& key) const {
    double v = number(key);
    if (v != std::round(v) || std::abs(v) > 9e15)
      throw error(key, "must be an integer, got " + spec_[key].dump(), "write a whole number");
    return static_cast<long long>(v);
  }

  bool flag(const std::string& key) const {
    if (!spec_.contains(key)) return false;
    if (!spec_[key].is_boolean())
      throw error(key, "must be true or false, got " + spec_[key].dump(), "write true or false");
    return spec_[key].get<bool>();
  }

  static std::string join(const std::set<std::string>& keys) {
    std::string out;
    for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
    return out;
  }

 private:
  const json& spec_;
  std::string source_;
  std::string field_;
};

FloatDistribution parse_float(const FieldReader& reader, const json& spec) {
  reader.reject_unknown_keys(kFloatKeys);
  FloatDistribution d;
  d.low = reader.number("low");
  d.high = reader.number("high");
  d.log = reader.flag("log");
  if (d.low >= d.high)
    throw reader.error("low", "low (" + std::to_string(d.low) + ") must be below high (" + std::to_string(d.high) + ")",
                       "make low < high, or fix the value as a study default instead of searching it");
  if (d.log && d.low <= 0)
    throw reader.error("low", "a log-scaled range needs low > 0", "set low to a positive value or drop \"log\"");
  if (spec.contains("step") && !spec["step"].is_null()) {
    if (d.log) throw reader.error("step", "step cannot be combined with log", "drop one of \"step\" or \"log\"");
    d.step = reader.number("step");
    if (*d.step <= 0) throw reader.error("step", "step must be positive", "set step > 0");
  }
  return d;
}

IntDistribution parse_int(const FieldReader& reader, const json& spec) {
  reader.reject_unknown_keys(kIntKeys);
  IntDistribution d;
  d.low = reader.integer("low");
  d.high = reader.integer("high");
  d.log = reader.flag("log");
  if (d.low >= d.high)
    throw reader.error("low", "low (" + std::to_string(d.low) + ") must be below high (" + std::to_string(d.high) + ")",
                       "make low < high");
  if (d.log && d.low < 1) throw reader.error("low", "a log-scaled int range needs low >= 1", "set low to 1 or more");
  if (spec.contains("step")) {
    d.step = reader.integer("step");
    if (d.step < 1) throw reader.error("step", "step must be at least 1", "set step >= 1");
    if (d.log && d.step != 1) throw reader.error("step", "step cannot be combined with log", "drop one of them");
  }
  return d;
}

CategoricalDistribution parse_categorical(const FieldReader& reader, const json& spec) {
  reader.reject_unknown_keys(kCategoricalKeys);
  if (!spec.contains("choices") || !spec["choices"].is_array() || spec["choices"].empty())
    throw reader.error("choices", "missing or empty", "add \"choices\": [\"a\", \"b\"]");
  CategoricalDistribution d;
  for (const json& choice : spec["choices"]) {
    if (!(choice.is_string() || choice.is_number() || choice.is_boolean() || choice.is_null()))
      throw reader.error("choices", "choice " + choice.dump() + " is not a string, number, boolean or null",
                         "use scalar choices");
    for (const json& seen : d.choices)
      if (seen == choice) throw reader.error("choices", "duplicate choice " + choice.dump(), "list each choice once");
    d.choices.push_back(choice);
  }
  return d;
}

std::optional<ParamCondition> parse_condition(const FieldReader& reader, const json& spec) {
  if (!spec.contains("when")) return std::nullopt;
  const json& when = spec["when"];
  if (!when.is_object() || when.size() != 1)
    throw reader.error("when", "must be an object with one parameter, e.g. {\"kind\": \"b\"}",
                       "write \"when\": {\"<parent>\": <value or [values]>}");
  ParamCondition condition;
  condition.parent = when.begin().key();
  const json& values = when.begin().value();
  if (values.is_array()) {
    if (values.empty()) throw reader.error("when", "the list of parent values is empty", "list at least one value");
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
  if (!search_space.is_object() || search_space.empty())
    throw UserError::at(source, "search_space", "missing or empty",
                        "add \"search_space\": {\"lr\": {\"type\": \"float\", \"low\": 1e-4, \"high\": 1e-1, \"log\": true}}");
  std::vector<ParamSpec> params;
  for (const auto& item : search_space.items()) {
    const std::string field = "search_space." + item.key();
    const json& spec = item.value();
    FieldReader reader(spec, source, field);
    if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string())
      throw reader.error("type", "missing", "add \"type\": \"float\", \"int\" or \"categorical\"");
    const std::string type = spec["type"].get<std::string>();
    ParamSpec param;
    param.name = item.key();
    if (type == "float") param.distribution = parse_float(reader, spec);
    else if (type == "int") param.distribution = parse_int(reader, spec);
    else if (type == "categorical") param.distribution = parse_categorical(reader, spec);
    else throw reader.error("type", "unknown type '" + type + "'", "use \"float\", \"int\" or \"categorical\"");
    param.condition = parse_condition(reader, spec);
    params.push_back(std::move(param));
  }
  for (const auto& param : params) {
    if (!param.condition) continue;
    const std::string field = "search_space." + param.name + ".when";
    auto parent = std::find_if(params.begin(), params.end(),
                               [&](const ParamSpec& p) { return p.name == param.condition->parent; });
    if (parent == params.end())
      throw UserError::at(source, field, "names unknown parameter '" + param.condition->parent + "'",
                          "name a parameter defined in search_space");
    for (const json& value : param.condition->values) {
      try {
        to_internal(parent->distribution, value);
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
  if (!external.is_object())
    throw UserError::at(source, "params", "must be an object {\"name\": value, ...}", "write a JSON object");
  Params params;
  for (const auto& item : external.items()) {
    const ParamSpec* spec = find(item.key());
    if (!spec)
      throw UserError::at(source, "params." + item.key(), "not in the study's search space",
                          "remove it or add it to search_space");
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
    bool active = is_active(p, params);
    if (active && !params.count(p.name))
      throw UserError::at(source, "params." + p.name, "missing", "give a value for every active parameter");
    if (!active && params.count(p.name))
      throw UserError::at(source, "params." + p.name, "is inactive: its \"when\" condition does not hold",
                          "remove it");
  }
  return params;
}

}  // namespace bfhpo::hpo
