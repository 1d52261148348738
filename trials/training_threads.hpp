// How many intra-op threads a training run uses, and setting them. A run
// uses the cores it is given:
//   training.threads (TrainingOptions::threads > 0) when the study gives it;
//   else OMP_NUM_THREADS when set (LibTorch read it at start-up);
//   else available_cpus(): the CPUs this process may run on (its affinity
//   mask), capped by the cgroup's CPU quota, so a container allowed 2 CPUs
//   of a 64-core host trains with 2 threads, not 64.
// The same seed and the same threads give the same values on the CPU
// (trials/reproduction.hpp); a trial records the count as bfhpo:threads.
#pragma once

#include "trials/trainer.hpp"

namespace bfhpo::trials {

// At least 1.
int available_cpus();

// torch::set_num_threads for `options` as above; returns the count in force.
int set_training_threads(const TrainingOptions& options);

}  // namespace bfhpo::trials
