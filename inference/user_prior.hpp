// The prior a user wants the reported posterior to have (infer --prior),
// over the one the estimator trained under. The amortized draws always come
// from the training prior; they are the proposal, and the exact-posterior
// step (importance weights, the items judged alone, chains) targets the
// user's prior times the likelihood (posterior_refinement.hpp).
//
// Each value is one of
//   NAME=normal(MEAN, SD)    log_a, b, thresholds (SD > 0)
//   c=beta(ALPHA, BETA)      the 3PL's guessing (both > 0)
//   FILE.json                {"log_a": {"mean": 0, "sd": 0.3}, ...}, as a study's simulator.priors
// naming only priors the trained model reads (models::prior_names); later
// values override earlier ones. Anything else is a UserError that names the
// value, the syntax and the names the model reads (the closest to a
// misspelt one first).
#pragma once

#include "models/simulators/simulator_spec.hpp"

#include <string>
#include <vector>

namespace bfhpo::inference {

models::ItemPriors user_priors(const std::vector<std::string>& values, const models::SimulatorSpec& trained);

// "log_a ~ N(0, 0.5), b ~ N(0, 1)": the priors `spec`'s model reads.
std::string prior_text(const models::SimulatorSpec& spec);

}  // namespace bfhpo::inference
