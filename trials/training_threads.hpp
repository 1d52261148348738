// How many intra-op threads a training run uses, and setting them:
//   training.threads (TrainingOptions::threads > 0) when the study gives it;
//   else OMP_NUM_THREADS when set (LibTorch read it at start-up);
//   else on the CPU one thread: at the sizes bfhpo trains on a CPU a second
//   thread bought ~11% of wall time for twice the CPU on an idle 2-core
//   machine, and cost 2 to 30 times the wall time on a busy one (OpenMP's
//   threads spin against the other processes: bench/README.md, training
//   threads); a second core pays as a second worker on the study;
//   on a GPU, available_cpus(): the CPUs this process may run on (its
//   affinity mask), capped by the cgroup's CPU quota, so a container allowed
//   2 CPUs of a 64-core host runs 2 threads, not 64.
// The BLAS's own thread pool follows the same count: LibTorch sizes MKL's
// but not OpenBLAS's (Debian's libtorch), which otherwise starts one thread
// a core whatever LibTorch uses (on a busy 2-core machine, 60-100% more
// CPU time a training step for no speed: bench/README.md, training
// throughput). An OPENBLAS_NUM_THREADS in the environment is left as it is.
// The same seed and the same threads give the same values on the CPU
// (trials/reproduction.hpp); a trial records the count as bfhpo:threads.
// `bfhpo infer` takes the same count as a CPU training run (one thread
// unless OMP_NUM_THREADS says otherwise).
#pragma once

#include "trials/trainer.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace bfhpo::trials {

// At least 1.
int available_cpus();

// torch::set_num_threads for `options` on `device` as above, and the BLAS's
// threads; returns LibTorch's count in force.
int set_training_threads(const TrainingOptions& options, const torch::Device& device);

// One intra-op and one BLAS thread while it lives (work that runs its own
// threads, each on small tensors), the counts before restored after.
class SingleThreadedKernels {
 public:
  SingleThreadedKernels();
  ~SingleThreadedKernels();
  SingleThreadedKernels(const SingleThreadedKernels&) = delete;
  SingleThreadedKernels& operator=(const SingleThreadedKernels&) = delete;

 private:
  int torch_threads_;
  std::optional<int> blas_threads_;
};

// work(t) for every task t < tasks, on min(tasks, available_cpus()) worker
// threads (task t on worker t mod workers) under SingleThreadedKernels, with
// no gradient; the first error a worker threw is rethrown once all joined.
// What each task computes must not depend on the worker that runs it.
void for_each_on_workers(int64_t tasks, const std::function<void(int64_t)>& work);

// OpenBLAS's thread count; none when the BLAS LibTorch calls is not OpenBLAS.
std::optional<int> openblas_threads();

}  // namespace bfhpo::trials
