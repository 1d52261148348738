// The network a training run starts from: a fresh one drawn from the run's
// seed, or, when the configuration names training.initial_weights
// (fine-tuning), that estimator's trained weights in the same network.
#pragma once

#include "models/approximator.hpp"
#include "trials/trial_config.hpp"

#include <memory>
#include <string>

namespace bfhpo::trials {

// A UserError naming the weights when they cannot be read or do not fit the
// configuration's network, built from `source` (models/approximator_weights.hpp).
// study_trial_config has checked that the file exists.
std::shared_ptr<models::ContinuousApproximatorImpl> starting_network(const TrialConfig& config,
                                                                     const std::string& source);

}  // namespace bfhpo::trials
