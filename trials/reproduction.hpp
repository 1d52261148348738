// What a trial trained with beyond its configuration, and whether a run here
// can reproduce it. A trial records bfhpo:seed, bfhpo:threads,
// bfhpo:libtorch, bfhpo:device and bfhpo:oom_attempts in the journal;
// `export --best` writes them under "trained_with" with the trial's
// validation loss, and `bfhpo train --params` checks them before retraining.
//
// The same validation loss (to 1e-6) needs: the same seed, a CPU on both
// sides (CUDA kernels are not bitwise deterministic), the same number of
// training threads (reductions and parts of a step split by thread: trials/
// training_threads.hpp), the same LibTorch version,
// and a trial that never took an OOM retry (the retry changed its batch
// size or item chunk mid-run; `train` starts with the final ones).
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct TrainedWith {
  int trial = 0;
  uint64_t seed = 0;
  std::optional<int> threads;     // none: recorded before bfhpo kept it
  std::string device;             // "cpu", "cuda", ...; empty when unknown
  std::string libtorch;           // LibTorch version; empty when unknown
  int oom_attempts = 0;
  std::optional<double> validation_loss;

  nlohmann::json to_json() const;
  // Reads what to_json wrote; UserError naming `source` when malformed.
  static TrainedWith from_json(const nlohmann::json& json, const std::string& source);
};

// From the trial's journal attributes; `fallback_seed` when it has no bfhpo:seed.
TrainedWith trained_with(const hpo::FrozenTrial& trial, uint64_t fallback_seed);

// Why a run here with `seed` on `device` and `threads` training threads does
// not reproduce `trial`'s validation loss exactly; empty when it should.
std::vector<std::string> reproduction_obstacles(const TrainedWith& trial, uint64_t seed, const std::string& device,
                                                int threads);

}  // namespace bfhpo::trials
