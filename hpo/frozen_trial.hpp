// A trial as recorded in the study journal: Optuna's FrozenTrial, with its
// state codes (RUNNING=0 COMPLETE=1 PRUNED=2 FAIL=3 WAITING=4) and parameters
// in internal representation.
#pragma once

#include "hpo/distributions.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

enum class TrialState { Running = 0, Complete = 1, Pruned = 2, Fail = 3, Waiting = 4 };

// Optuna's StudyDirection codes as the journal stores them.
enum class StudyDirection { Minimize = 1, Maximize = 2 };
// One direction per objective, as Optuna's study.directions; a single-objective study has one.
using Directions = std::vector<StudyDirection>;

// Parameter name -> internal value (see distributions.hpp).
using Params = std::map<std::string, double>;

struct FrozenTrial {
  int number = 0;    // position of the trial within its study, by log order
  int trial_id = 0;  // position of the trial among all trials of the journal
  TrialState state = TrialState::Running;
  // One value per objective (Optuna's values); set for COMPLETE, optionally
  // for PRUNED (its last intermediate value), empty otherwise.
  std::vector<double> values;
  Params params;
  std::map<std::string, Distribution> distributions;
  std::map<int, double> intermediate_values;  // step -> reported value
  nlohmann::json user_attrs = nlohmann::json::object();
  nlohmann::json system_attrs = nlohmann::json::object();
  std::string datetime_start;     // ISO 8601, as Python's datetime.isoformat()
  std::string datetime_complete;  // empty until the trial is finished

  // The first objective's value (the value of a single-objective study).
  std::optional<double> value() const {
    if (values.empty()) return std::nullopt;
    return values.front();
  }
  bool is_finished() const {
    return state == TrialState::Complete || state == TrialState::Pruned || state == TrialState::Fail;
  }
  std::optional<double> last_intermediate_value() const {
    if (intermediate_values.empty()) return std::nullopt;
    return intermediate_values.rbegin()->second;
  }
};

const char* to_string(TrialState state);
// The state a journal line's code names; std::invalid_argument for a code
// Optuna does not define (a replay then names the line).
TrialState trial_state_from_code(long long code);
const char* to_string(StudyDirection direction);
// "minimize", or "[minimize, maximize]" for several.
std::string to_string(const Directions& directions);

}  // namespace bfhpo::hpo
