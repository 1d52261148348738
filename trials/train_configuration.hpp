// `bfhpo train`: trains one configuration outside any study. The study file
// gives the fixed sections, PARAMS.json (what `bfhpo export --best` writes,
// or a plain {"name": value} object) the searched values; an export also
// gives the memory configuration and batch size its trial trained with. The run trains,
// evaluates the posterior diagnostics, and writes into `out_dir`:
// weights.pt, config.json (the complete configuration) and result.json.
#pragma once

#include "models/diagnostics.hpp"
#include "trials/trainer.hpp"
#include "trials/trial_config.hpp"

#include <filesystem>
#include <optional>

namespace bfhpo::trials {

struct TrainRequest {
  std::filesystem::path study_file;
  std::filesystem::path params_file;  // empty: the study's fixed values only
  std::optional<int> epochs;          // overrides training.epochs
  std::filesystem::path out_dir;      // empty: "<study file>.train" beside the study file
};

struct TrainOutcome {
  TrialConfig config;
  std::string device;
  TrainingSummary summary;
  models::Diagnostics diagnostics;
  std::filesystem::path out_dir;
  double seconds = 0.0;

  nlohmann::json to_json() const;  // what result.json holds
};

TrainOutcome train_configuration(const TrainRequest& request, const EpochCallback& on_epoch = {},
                                 const StepCallback& on_step = {});

}  // namespace bfhpo::trials
