#include "trials/starting_network.hpp"

#include "models/approximator_weights.hpp"

namespace bfhpo::trials {

std::shared_ptr<models::ContinuousApproximatorImpl> starting_network(const TrialConfig& config,
                                                                     const std::string& source) {
  auto network = models::make_approximator(config.approximator, config.training.seed);
  if (!config.training.initial_weights.empty())
    models::load_checked_weights(*network, config.training.initial_weights, source);
  return network;
}

}  // namespace bfhpo::trials
