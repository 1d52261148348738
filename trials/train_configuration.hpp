// `bfhpo train`: trains one configuration outside any study. The study file
// gives the fixed sections, PARAMS.json (what `bfhpo export --best` writes,
// or a plain {"name": value} object) the searched values; an export also
// gives the seed, memory configuration and batch size its trial trained
// with, so the run retrains that trial: on the same machine it reproduces the
// trial's validation loss, and `reproduction` says why when it cannot
// (trials/reproduction.hpp). `seed` trains with a new seed instead. Without
// an export the seed is the study's. Diagnostics are evaluated on the
// study seed's datasets, as a trial's are. The run writes into `out_dir`:
// weights.pt, config.json (the complete configuration) and result.json.
#pragma once

#include "models/diagnostics.hpp"
#include "trials/reproduction.hpp"
#include "trials/trainer.hpp"
#include "trials/trial_config.hpp"

#include <filesystem>
#include <optional>

namespace bfhpo::trials {

struct TrainRequest {
  std::filesystem::path study_file;
  std::filesystem::path params_file;  // empty: the study's fixed values only
  std::optional<int> epochs;          // overrides training.epochs
  std::optional<uint64_t> seed;       // overrides the exported trial's (or the study's) seed
  std::filesystem::path out_dir;      // empty: "<study file>.train" beside the study file
};

struct TrainOutcome {
  TrialConfig config;
  std::string device;
  TrainingSummary summary;
  models::Diagnostics diagnostics;
  std::filesystem::path out_dir;
  double seconds = 0.0;
  int threads = 0;                    // training threads the run trained with (trials/training_threads.hpp)
  double measured_peak_mb = 0.0;      // the most tensor memory training held (MemoryMeter), as a trial records
  // When PARAMS.json is a trial's export: that trial, and why this run does
  // not reproduce its validation loss exactly (empty: it should, to 1e-6).
  std::optional<TrainedWith> retrains;
  std::vector<std::string> reproduction_obstacles;

  nlohmann::json to_json() const;  // what result.json holds
};

TrainOutcome train_configuration(const TrainRequest& request, const EpochCallback& on_epoch = {},
                                 const StepCallback& on_step = {});

}  // namespace bfhpo::trials
