// How many threads a training run uses, and setting them:
//   training.threads (TrainingOptions::threads > 0) when the study gives it;
//   else OMP_NUM_THREADS when set (LibTorch read it at start-up);
//   else on the CPU one thread (a second core pays as a second worker on the
//   study);
//   on a GPU, available_cpus(): the CPUs this process may run on (its
//   affinity mask), capped by the cgroup's CPU quota, so a container allowed
//   2 CPUs of a 64-core host runs 2 threads, not 64.
// On a GPU they are LibTorch's intra-op threads. On the CPU a step runs them
// as parts of its batch side by side (trials/split_step.hpp), and LibTorch's
// kernels stay on one thread: at the sizes bfhpo trains on a CPU a second
// intra-op thread bought nothing (2PL 500 x 20, B 32, idle 2-core machine:
// 0.70 s a step on one thread, 0.72 on two) and cost 2 to 30 times the wall
// time on a busy machine (OpenMP's threads spin against the other processes:
// bench/README.md, training threads), where two parts take 0.47-0.52 s. A
// step that cannot split (dropout or the calibration penalty draw random
// numbers) runs on one thread.
// The BLAS's own thread pool follows LibTorch's count: LibTorch sizes MKL's
// but not OpenBLAS's (Debian's libtorch), which otherwise starts one thread
// a core whatever LibTorch uses (on a busy 2-core machine, 60-100% more
// CPU time a training step for no speed: bench/README.md, training
// throughput). An OPENBLAS_NUM_THREADS in the environment is left as it is.
// The same seed and the same threads give the same values on the CPU
// (trials/reproduction.hpp); a trial records the count as bfhpo:threads.
// `bfhpo infer` gives LibTorch's kernels the count a CPU training run has
// (one thread unless OMP_NUM_THREADS says otherwise).
#pragma once

#include "trials/trainer.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace bfhpo::trials {

// At least 1.
int available_cpus();

// The count above for `options` on `device`.
int training_threads(const TrainingOptions& options, const torch::Device& device);

// LibTorch's and the BLAS's threads for a training run with `options` on
// `device` as above (on the CPU one); returns the run's count.
int set_training_threads(const TrainingOptions& options, const torch::Device& device);

// LibTorch's intra-op threads and the BLAS's (unless OPENBLAS_NUM_THREADS is
// set); returns LibTorch's count in force.
int set_kernel_threads(int threads);

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

// work(t) for every task t < tasks, on min(tasks, max_workers) worker threads
// (max_workers 0: available_cpus(); task t on worker t mod workers) under
// SingleThreadedKernels, with no gradient; the first error a worker threw is
// rethrown once all joined. What each task computes must not depend on the
// worker that runs it. Called from a task of another for_each_on_workers,
// it runs its tasks one after another on that worker: the outer workers
// already keep the cores busy (infer's data sets side by side, each data
// set's stages inside).
void for_each_on_workers(int64_t tasks, const std::function<void(int64_t)>& work, int64_t max_workers = 0);

// OpenBLAS's thread count; none when the BLAS LibTorch calls is not OpenBLAS.
std::optional<int> openblas_threads();

}  // namespace bfhpo::trials
