// Optuna's enqueued params: `study.enqueue_trial(params)` adds a WAITING trial
// whose system attribute "fixed_params" holds external values ({"lr": 0.01,
// "opt": "adam"}), possibly for only some of the parameters. The worker that
// claims the trial suggests those values and samples the others. What Optuna
// (3.1 to 5.0) does with a value, and so what bfhpo does:
//   - a number outside its range or off its step grid: a warning, and the
//     trial runs with it (an int param's non-integer value becomes int(v), as
//     Optuna's readers show it);
//   - a categorical value that is not a choice, a non-number for a float or
//     int, NaN or infinity: the trial FAILs (Optuna's suggest raises);
//   - a name that is not in the search space: ignored with a warning (Optuna
//     never suggests it).
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/search_space.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

inline constexpr const char* kFixedParamsAttr = "fixed_params";

struct FixedParams {
  Params params;                      // internal values of the usable ones
  std::vector<std::string> warnings;  // values used anyway, names ignored
  std::string unusable;               // set: why the trial cannot run (it FAILs)
};

// Reads a trial's "fixed_params" attribute (an object of external values;
// anything else is unusable) through the search space.
FixedParams read_fixed_params(const nlohmann::json& fixed_params, const SearchSpace& space);

// The assignment a claimed trial runs with: walking the space parents first,
// each active parameter takes its `fixed` value, else its `proposal` value,
// else a draw from its prior at `uniform()`; inactive parameters are dropped.
Params complete_assignment(const SearchSpace& space, const Params& fixed, const Params& proposal,
                           const std::function<double()>& uniform);

// Whether `params` holds every parameter active under it.
bool covers_active(const SearchSpace& space, const Params& params);

}  // namespace bfhpo::hpo
