#include "models/simulators/simulator_spec.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace bfhpo::models {
namespace {

using nlohmann::json;

std::pair<int64_t, int64_t> range_at(ConfigSection& section, const char* key, std::pair<int64_t, int64_t> fallback) {
  const json* value = section.find(key);
  if (!value) return fallback;
  const std::string field = section.field(key);
  if (value->is_number()) {
    const int64_t n = config_integer(*value, section.source(), field, 1);
    return {n, n};
  }
  if (!value->is_array() || value->size() != 2)
    throw section.error(key, "expected [low, high] or a number", "give e.g. [15, 50]");
  const int64_t low = config_integer((*value)[0], section.source(), field + "[0]", 1);
  const int64_t high = config_integer((*value)[1], section.source(), field + "[1]", 1);
  if (low > high) throw section.error(key, "low > high", "give [low, high] with low <= high");
  return {low, high};
}

MissingRate read_missing(ConfigSection& section) {
  const json* value = section.find("missing");
  if (!value) return {};
  const std::string field = section.field("missing");
  const auto rate = [&](const json& v, const std::string& name) {
    const double r = config_number(v, section.source(), name);
    if (!(r >= 0.0 && r < 1.0))
      throw UserError::at(section.source(), name, "a missing rate must be in [0, 1), got " + v.dump(),
                          "give a rate such as 0.1 (0: no missing responses)");
    return r;
  };
  if (value->is_number()) {
    const double r = rate(*value, field);
    return {r, r};
  }
  if (!value->is_array() || value->size() != 2)
    throw section.error("missing", "expected a rate or [low, high]", "give e.g. 0.1 or [0, 0.3]");
  const MissingRate range{rate((*value)[0], field + "[0]"), rate((*value)[1], field + "[1]")};
  if (range.low > range.high) throw section.error("missing", "low > high", "give [low, high] with low <= high");
  return range;
}

void read_normal(ConfigSection& priors, const char* key, NormalPrior& prior) {
  auto section = priors.section(key);
  if (!section) return;
  if (const auto mean = section->number("mean")) prior.mean = *mean;
  if (const auto sd = section->number("sd")) {
    if (!(*sd > 0)) throw section->error("sd", "must be positive, got " + std::to_string(*sd), "give e.g. 1");
    prior.sd = *sd;
  }
  section->reject_unknown_keys();
}

void read_beta(ConfigSection& priors, const char* key, BetaPrior& prior) {
  auto section = priors.section(key);
  if (!section) return;
  for (const auto& [name, value] : {std::pair{"alpha", &prior.alpha}, std::pair{"beta", &prior.beta}}) {
    if (const auto v = section->number(name)) {
      if (!(*v > 0))
        throw section->error(name, "a Beta prior's parameters must be positive, got " + std::to_string(*v),
                             "give e.g. {\"alpha\": 5, \"beta\": 17}");
      *value = *v;
    }
  }
  section->reject_unknown_keys();
}

void read_priors(ConfigSection& simulator, SimulatorSpec& spec) {
  if (auto priors = simulator.section("priors")) read_item_priors(*priors, spec.model, spec.priors);
}

json normal_json(const NormalPrior& p) { return {{"mean", p.mean}, {"sd", p.sd}}; }

}  // namespace

std::vector<std::string> prior_names(const std::string& model) {
  if (model == "rasch") return {"b"};
  if (model == "2pl") return {"log_a", "b"};
  if (model == "3pl") return {"log_a", "b", "c"};
  return {"log_a", "thresholds"};
}

void read_item_priors(ConfigSection& priors, const std::string& model, ItemPriors& out) {
  const std::vector<std::string> used = prior_names(model);
  const auto uses = [&](const char* name) { return std::find(used.begin(), used.end(), name) != used.end(); };
  if (uses("log_a")) read_normal(priors, "log_a", out.log_a);
  if (uses("b")) read_normal(priors, "b", out.b);
  if (uses("c")) read_beta(priors, "c", out.c);
  if (uses("thresholds")) read_normal(priors, "thresholds", out.thresholds);
  priors.reject_unknown_keys();
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"rasch", "2pl", "3pl", "grm"};
  return names;
}

std::vector<std::string> item_parameter_names(const SimulatorSpec& spec) {
  if (spec.model == "rasch") return {"b"};
  if (spec.model == "2pl") return {"log_a", "b"};
  if (spec.model == "3pl") return {"log_a", "b", "logit_c"};
  if (spec.model == "grm") {
    std::vector<std::string> names{"log_a"};
    for (int64_t k = 1; k < spec.n_categories; ++k) names.push_back("b" + std::to_string(k));
    return names;
  }
  throw std::invalid_argument("item_parameter_names: unknown model \"" + spec.model + "\"");
}

SimulatorSpec simulator_spec_from_config(ConfigSection section) {
  SimulatorSpec spec;
  if (const auto model = section.choice("model", model_names())) spec.model = *model;
  if (const auto k = section.integer("n_categories", 2, 100)) {
    if (spec.model != "grm" && *k != 2)
      throw section.error("n_categories", "model \"" + spec.model + "\" has binary responses, got " +
                                              std::to_string(*k) + " categories",
                          "remove n_categories, or use \"model\": \"grm\" for graded responses");
    spec.n_categories = *k;
  } else if (spec.model == "grm") {
    throw section.error("n_categories", "the graded response model needs its number of categories K",
                        "give \"n_categories\": K with K >= 2 (e.g. 5 for a 5-point Likert item)");
  }
  auto& r = spec.ranges;
  std::tie(r.min_items, r.max_items) = range_at(section, "n_items", {r.min_items, r.max_items});
  std::tie(r.min_persons, r.max_persons) = range_at(section, "n_persons", {r.min_persons, r.max_persons});
  spec.missing = read_missing(section);
  read_priors(section, spec);
  section.reject_unknown_keys();
  return spec;
}

json SimulatorSpec::priors_json() const {
  json out = json::object();
  for (const auto& name : prior_names(model)) {
    if (name == "log_a") out["log_a"] = normal_json(priors.log_a);
    if (name == "b") out["b"] = normal_json(priors.b);
    if (name == "c") out["c"] = {{"alpha", priors.c.alpha}, {"beta", priors.c.beta}};
    if (name == "thresholds") out["thresholds"] = normal_json(priors.thresholds);
  }
  return out;
}

json SimulatorSpec::to_json() const {
  json out = {{"model", model},
              {"n_items", {ranges.min_items, ranges.max_items}},
              {"n_persons", {ranges.min_persons, ranges.max_persons}},
              {"missing", {missing.low, missing.high}},
              {"priors", priors_json()}};
  if (model == "grm") out["n_categories"] = n_categories;
  return out;
}

}  // namespace bfhpo::models
