// Reading a network's weights into an approximator built from a
// configuration, with every way the two can disagree named: LibTorch's own
// load gives each tensor the file's, whatever its shape, and ignores layers
// the configuration does not build. Used where trained weights are read:
// infer (a trained model) and training that starts from an estimator's
// weights (the study's training.initial_weights).
#pragma once

#include "models/approximator.hpp"

#include <filesystem>
#include <string>

namespace bfhpo::models {

// Reads `weights` into `approximator`, built from the configuration in
// `config_source` (a file's path, for messages). A UserError naming the
// weights when LibTorch cannot read the file (empty, cut short, corrupt),
// when a tensor the configuration builds is missing or has another shape,
// or when the file holds a numbered layer past the configuration's (a
// deeper network's).
void load_checked_weights(ContinuousApproximatorImpl& approximator, const std::filesystem::path& weights,
                          const std::string& config_source);

}  // namespace bfhpo::models
