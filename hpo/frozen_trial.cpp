#include "hpo/frozen_trial.hpp"

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

const char* to_string(StudyDirection direction) {
  return direction == StudyDirection::Maximize ? "maximize" : "minimize";
}

}  // namespace bfhpo::hpo
