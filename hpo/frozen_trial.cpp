#include "hpo/frozen_trial.hpp"

#include <stdexcept>

namespace bfhpo::hpo {

const char* to_string(TrialState state) {
  switch (state) {
    case TrialState::Running: return "RUNNING";
    case TrialState::Complete: return "COMPLETE";
    case TrialState::Pruned: return "PRUNED";
    case TrialState::Fail: return "FAIL";
    case TrialState::Waiting: return "WAITING";
  }
  return "UNKNOWN";
}

TrialState trial_state_from_code(long long code) {
  if (code < static_cast<int>(TrialState::Running) || code > static_cast<int>(TrialState::Waiting))
    throw std::invalid_argument("trial state " + std::to_string(code) +
                                " is not one of Optuna's (0 RUNNING, 1 COMPLETE, 2 PRUNED, 3 FAIL, 4 WAITING)");
  return static_cast<TrialState>(code);
}

const char* to_string(StudyDirection direction) {
  return direction == StudyDirection::Maximize ? "maximize" : "minimize";
}

std::string to_string(const Directions& directions) {
  if (directions.size() == 1) return to_string(directions.front());
  std::string text = "[";
  for (std::size_t i = 0; i < directions.size(); ++i) text += (i ? ", " : "") + std::string(to_string(directions[i]));
  return text + "]";
}

}  // namespace bfhpo::hpo
