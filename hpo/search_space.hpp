// The declarative search space of a study: named distributions, some of them
// conditional. A parameter with a condition exists in a trial only when its
// parent parameter took one of the listed values:
//
//   "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}}
//   "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": ["b", "c"]}}
//
// Parameters are kept in an order in which every parent comes before its
// children, so a sampler can fill them in one pass.
#pragma once

#include "hpo/distributions.hpp"
#include "hpo/frozen_trial.hpp"
#include "hpo/trial_span.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

struct ParamCondition {
  std::string parent;
  std::vector<nlohmann::json> values;  // external values of the parent that enable the parameter
};

struct ParamSpec {
  std::string name;
  Distribution distribution;
  std::optional<ParamCondition> condition;
};

class SearchSpace {
 public:
  SearchSpace() = default;
  // Parents before children; throws std::invalid_argument on a cycle or an unknown parent.
  explicit SearchSpace(std::vector<ParamSpec> params);

  // Parses the "search_space" object of a study file ({} is the empty space
  // of a study that trains one configuration). Errors are UserErrors naming
  // `source` (the file) and the field, e.g. search_space.lr.low.
  static SearchSpace from_json(const nlohmann::json& search_space, const std::string& source);
  nlohmann::json to_json() const;

  const std::vector<ParamSpec>& params() const { return params_; }
  const ParamSpec* find(const std::string& name) const;

  // Whether `spec` exists given the values already assigned to its parents.
  bool is_active(const ParamSpec& spec, const Params& assigned) const;
  // Names of the parameters that exist in a full assignment.
  std::vector<std::string> active_names(const Params& assignment) const;
  // True when `params` assigns exactly the active parameters, each inside its distribution.
  bool is_valid_assignment(const Params& params) const;

  // Params as {"name": external value, ...}, and back (throws UserError naming `source`).
  nlohmann::json to_external(const Params& params) const;
  Params from_external(const nlohmann::json& external, const std::string& source) const;
  // As from_external for some of the parameters (what `bfhpo enqueue` may
  // fix): each named value must be in the space and inside its distribution,
  // and a parameter whose parent is given must be active under it; active
  // parameters left out are allowed.
  Params partial_from_external(const nlohmann::json& external, const std::string& source) const;

  // Refuses (UserError naming `source` and search_space.<name>) a parameter
  // whose distribution is incompatible with one `trials` recorded under the
  // same name, as Optuna refuses to set it (see hpo::incompatibility).
  void check_compatible(const TrialSpan& trials, const std::string& source) const;

 private:
  std::vector<ParamSpec> params_;
};

}  // namespace bfhpo::hpo
