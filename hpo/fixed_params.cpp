#include "hpo/fixed_params.hpp"

#include <cmath>
#include <stdexcept>

namespace bfhpo::hpo {

using nlohmann::json;

FixedParams read_fixed_params(const json& fixed_params, const SearchSpace& space) {
  FixedParams read;
  if (!fixed_params.is_object()) {
    read.unusable = "its \"fixed_params\" is " + fixed_params.dump() + ", not an object {\"name\": value}";
    return read;
  }
  for (const auto& [name, value] : fixed_params.items()) {
    const ParamSpec* spec = space.find(name);
    if (!spec) {
      read.warnings.push_back("fixed param '" + name + "' is not in the search space; ignored");
      continue;
    }
    const Distribution& distribution = spec->distribution;
    double internal = 0.0;
    if (std::holds_alternative<CategoricalDistribution>(distribution)) {
      try {
        internal = to_internal(distribution, value);
      } catch (const std::invalid_argument& e) {
        read.unusable = "fixed param '" + name + "': " + e.what();
        return read;
      }
    } else {
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        read.unusable = "fixed param '" + name + "' is " + value.dump() + ", not a finite number";
        return read;
      }
      internal = value.get<double>();
      if (std::holds_alternative<IntDistribution>(distribution) && internal != std::trunc(internal)) {
        read.warnings.push_back("fixed param '" + name + "' = " + value.dump() + " is not an integer; " +
                                "it runs as " + std::to_string(static_cast<long long>(internal)) + ", as Optuna reads it");
        internal = std::trunc(internal);
      }
      if (!contains(distribution, internal))
        read.warnings.push_back("fixed param '" + name + "' = " + value.dump() + " is out of range for " +
                                distribution_to_optuna_json(distribution) + "; the trial runs with it, as in Optuna");
    }
    read.params[name] = internal;
  }
  return read;
}

Params complete_assignment(const SearchSpace& space, const Params& fixed, const Params& proposal,
                           const std::function<double()>& uniform) {
  Params assignment;
  for (const ParamSpec& spec : space.params()) {
    if (!space.is_active(spec, assignment)) continue;
    if (const auto f = fixed.find(spec.name); f != fixed.end()) assignment[spec.name] = f->second;
    else if (const auto p = proposal.find(spec.name); p != proposal.end()) assignment[spec.name] = p->second;
    else assignment[spec.name] = value_at_quantile(spec.distribution, uniform());
  }
  return assignment;
}

bool covers_active(const SearchSpace& space, const Params& params) {
  for (const std::string& name : space.active_names(params))
    if (!params.count(name)) return false;
  return true;
}

}  // namespace bfhpo::hpo
