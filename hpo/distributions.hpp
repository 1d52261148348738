// Parameter distributions, exactly Optuna's FloatDistribution, IntDistribution
// and CategoricalDistribution, so that a journal round-trips through Optuna.
//
// Every parameter value has an internal representation (a double): the value
// itself for float and int, the index of the choice for categorical. That is
// what samplers work on and what the journal stores (param_value_internal).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace bfhpo::hpo {

struct FloatDistribution {
  double low = 0.0;
  double high = 1.0;
  bool log = false;
  std::optional<double> step;  // grid low, low + step, ... <= high
};

struct IntDistribution {
  long long low = 0;
  long long high = 1;
  bool log = false;
  long long step = 1;
};

struct CategoricalDistribution {
  std::vector<nlohmann::json> choices;  // strings, numbers, booleans or null
};

using Distribution = std::variant<FloatDistribution, IntDistribution, CategoricalDistribution>;

// Optuna's distribution_to_json / json_to_distribution:
//   {"name": "FloatDistribution", "attributes": {"low":..,"high":..,"log":..,"step":..}}
std::string distribution_to_optuna_json(const Distribution& distribution);
// Throws std::invalid_argument on text that is not an Optuna distribution.
Distribution distribution_from_optuna_json(const std::string& text);

// Internal <-> external representation (Optuna's to_internal_repr / to_external_repr).
nlohmann::json to_external(const Distribution& distribution, double internal);
// Throws std::invalid_argument when the value is not one of the distribution's values.
double to_internal(const Distribution& distribution, const nlohmann::json& external);

// True when the internal value lies in the distribution (on its step grid).
bool contains(const Distribution& distribution, double internal);
// The inverse CDF of the distribution's uniform prior at u in [0, 1): uniform
// (log-uniform for log) for float, each grid point or integer an equal share
// (log int: the cell [k - 0.5, k + 0.5] in log space, as Optuna), each choice
// an equal share. Internal repr. Random draws and Latin hypercube strata use it.
double value_at_quantile(const Distribution& distribution, double u);
// True when the distribution has exactly one value.
bool is_single(const Distribution& distribution);
bool operator==(const Distribution& a, const Distribution& b);
// Optuna's check_distribution_compatibility: why values recorded under `recorded`
// cannot share a parameter name with `now` (another kind, another log setting,
// other categorical choices), or nullopt. A changed range is compatible.
std::optional<std::string> incompatibility(const Distribution& recorded, const Distribution& now);
inline bool operator!=(const Distribution& a, const Distribution& b) { return !(a == b); }

}  // namespace bfhpo::hpo
