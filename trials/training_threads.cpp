#include "trials/training_threads.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace bfhpo::trials {
namespace {

// CPUs the cgroup's quota allows (quota / period, rounded up); none when
// unlimited or unreadable. cgroup v2 (cpu.max: "max 100000" or "200000
// 100000"), else v1 (cpu.cfs_quota_us, -1 unlimited, and cpu.cfs_period_us).
std::optional<int> cgroup_cpu_quota() {
  double quota = -1, period = 0;
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string quota_text;
  if (v2 >> quota_text >> period) {
    if (quota_text == "max") return std::nullopt;
    quota = std::atof(quota_text.c_str());
  } else {
    std::ifstream v1_quota("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    std::ifstream v1_period("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (!(v1_quota >> quota) || !(v1_period >> period)) return std::nullopt;
  }
  if (quota <= 0 || period <= 0) return std::nullopt;
  return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

// OpenBLAS's thread controls, looked up at run time: absent when LibTorch
// uses another BLAS (MKL, whose threads torch::set_num_threads sets).
template <typename Fn>
Fn openblas_function(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

void set_openblas_threads(int threads) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  if (const auto set = openblas_function<void (*)(int)>("openblas_set_num_threads")) set(threads);
}

}  // namespace

int available_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int cpus = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : 1;
  if (const auto quota = cgroup_cpu_quota()) cpus = std::min(cpus, *quota);
  return std::max(1, cpus);
}

int training_threads(const TrainingOptions& options, const torch::Device& device) {
  if (options.threads > 0) return options.threads;
  // What LibTorch read at start-up, not its count now (SingleThreadedKernels may be in force).
  if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp != nullptr && std::atoi(omp) > 0) return std::atoi(omp);
  return device.is_cpu() ? 1 : available_cpus();
}

int set_training_threads(const TrainingOptions& options, const torch::Device& device) {
  const int threads = training_threads(options, device);
  set_kernel_threads(device.is_cpu() ? 1 : threads);
  return threads;
}

int set_kernel_threads(int threads) {
  torch::set_num_threads(threads);
  const int in_force = torch::get_num_threads();
  set_openblas_threads(in_force);
  return in_force;
}

SingleThreadedKernels::SingleThreadedKernels()
    : torch_threads_(torch::get_num_threads()), blas_threads_(openblas_threads()) {
  torch::set_num_threads(1);
  if (const auto set = openblas_function<void (*)(int)>("openblas_set_num_threads")) set(1);
}

SingleThreadedKernels::~SingleThreadedKernels() {
  torch::set_num_threads(torch_threads_);
  if (const auto set = openblas_function<void (*)(int)>("openblas_set_num_threads"); set && blas_threads_)
    set(*blas_threads_);
}

std::optional<int> openblas_threads() {
  if (const auto get = openblas_function<int (*)()>("openblas_get_num_threads")) return get();
  return std::nullopt;
}

namespace {

thread_local bool on_a_worker = false;

}  // namespace

void for_each_on_workers(int64_t tasks, const std::function<void(int64_t)>& work, int64_t max_workers) {
  if (on_a_worker) {
    for (int64_t task = 0; task < tasks; ++task) work(task);
    return;
  }
  const SingleThreadedKernels single_threaded;
  const int64_t workers = std::min<int64_t>(tasks, max_workers > 0 ? max_workers : available_cpus());
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  for (int64_t w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      try {
        torch::NoGradGuard no_grad;
        on_a_worker = true;
        for (int64_t task = w; task < tasks; task += workers) work(task);
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace bfhpo::trials
