// What one training run needs, built from a training study's sections and a
// trial's params:
//
//   "simulator":    models::SimulatorSpec (models/simulators/simulator_spec.hpp):
//                   {"model", "n_categories", "n_items", "n_persons", "missing", "priors"}
//   "training":     {"epochs", "num_batches", "batch_size", "learning_rate",
//                    "warmup_fraction", "clip_grad_norm", "validation_sims", "device", "threads",
//                    "initial_weights"}
//   "approximator": ApproximatorSpec fields, nested or dotted (models/approximator_spec.hpp);
//                   "calibrated": true is shorthand for calibration.enabled
//
// The complete configuration (to_json) also holds "seed", the seed the run
// trains with: a study's trial N trains with trial_seed(study seed, N).
//
// A search-space name is a dotted path: "training.<field>" for a training
// option, otherwise an ApproximatorSpec field ("summary.embed_dim",
// "flow.depth", "calibration.weight", ...). Params override the fixed values.
// Every error is a UserError naming the study file, the field and the fix
// (the closest valid name for an unknown one). The approximator's param_dim
// and n_categories are the model's (a study file that sets them otherwise is
// refused). LibTorch-free: the front executable reads training studies'
// configurations for export; whether a "cuda" device exists is checked when
// training starts (trials/device.hpp).
#pragma once

#include "hpo/study_spec.hpp"
#include "models/approximator_spec.hpp"
#include "models/simulators/simulator_spec.hpp"
#include "trials/training_options.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bfhpo::trials {

struct TrialConfig {
  models::ApproximatorSpec approximator;
  TrainingOptions training;
  models::SimulatorSpec simulator;
  std::string device = "auto";  // "auto" (CUDA when available), "cpu" or "cuda"

  // The complete configuration as JSON ({"seed", "simulator", "training", "approximator"}),
  // which parse_trial_config reads back unchanged.
  nlohmann::json to_json() const;
};

// The study's fixed configuration (no params). Checks every section and that
// every search-space name maps to a field.
TrialConfig study_trial_config(const hpo::StudySpec& study);
// `fixed` with `params` ({"name": external value}) applied and validated.
TrialConfig with_params(TrialConfig fixed, const nlohmann::json& params, const std::string& params_source);
// The study's fixed configuration with `params` applied.
TrialConfig make_trial_config(const hpo::StudySpec& study, const nlohmann::json& params,
                              const std::string& params_source);
// Reads the "seed", "simulator", "training" and "approximator" members of `document`.
TrialConfig parse_trial_config(const nlohmann::json& document, const std::string& source);

// The training seed of a study's trial `number` (simulation, initialisation, dropout).
uint64_t trial_seed(uint64_t study_seed, int number);

}  // namespace bfhpo::trials
