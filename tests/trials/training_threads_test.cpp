#include "trials/training_threads.hpp"

#include "common/user_error.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/trial_config.hpp"

#include <catch2/catch.hpp>
#include <sched.h>
#include <torch/torch.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace bfhpo;
using namespace bfhpo::trials;

namespace {

// Restores LibTorch's thread count, this thread's affinity, OMP_NUM_THREADS
// and OPENBLAS_NUM_THREADS (both unset meanwhile), and OpenBLAS's threads.
class ThreadSettingsGuard {
 public:
  ThreadSettingsGuard() : threads_(torch::get_num_threads()), openblas_threads_(openblas_threads()) {
    CPU_ZERO(&mask_);
    REQUIRE(sched_getaffinity(0, sizeof(mask_), &mask_) == 0);
    if (const char* omp = std::getenv("OMP_NUM_THREADS")) omp_ = omp;
    if (const char* openblas = std::getenv("OPENBLAS_NUM_THREADS")) openblas_ = openblas;
    unsetenv("OMP_NUM_THREADS");
    unsetenv("OPENBLAS_NUM_THREADS");
  }
  ~ThreadSettingsGuard() {
    sched_setaffinity(0, sizeof(mask_), &mask_);
    if (omp_) setenv("OMP_NUM_THREADS", omp_->c_str(), 1);
    set_kernel_threads(openblas_threads_.value_or(threads_));
    if (openblas_) setenv("OPENBLAS_NUM_THREADS", openblas_->c_str(), 1);
    torch::set_num_threads(threads_);
  }
  const cpu_set_t& mask() const { return mask_; }

 private:
  int threads_;
  std::optional<int> openblas_threads_;
  cpu_set_t mask_;
  std::optional<std::string> omp_, openblas_;
};

}  // namespace

TEST_CASE("training threads: training.threads is a GPU run's intra-op threads and OpenBLAS's, a CPU run's parts") {
  ThreadSettingsGuard guard;
  if (!openblas_threads()) WARN("LibTorch's BLAS is not OpenBLAS: its threads are LibTorch's to set");
  TrainingOptions options;
  for (const int threads : {1, 3, 2}) {
    options.threads = threads;
    CHECK(set_training_threads(options, torch::Device(torch::kCUDA)) == threads);
    CHECK(torch::get_num_threads() == threads);
    if (openblas_threads()) CHECK(*openblas_threads() == threads);
    // On the CPU the count is the steps' parts; the kernels stay on one thread.
    CHECK(set_training_threads(options, torch::kCPU) == threads);
    CHECK(torch::get_num_threads() == 1);
    if (openblas_threads()) CHECK(*openblas_threads() == 1);
  }
  // OPENBLAS_NUM_THREADS is the user's: OpenBLAS keeps the count it has.
  if (const auto before = openblas_threads()) {
    setenv("OPENBLAS_NUM_THREADS", std::to_string(*before).c_str(), 1);
    CHECK(set_kernel_threads(*before + 1) == *before + 1);
    CHECK(openblas_threads() == before);
    unsetenv("OPENBLAS_NUM_THREADS");
  }
}

TEST_CASE("training threads: unset, a CPU run uses one thread, a GPU run the CPUs its affinity allows, "
          "and OMP_NUM_THREADS when set") {
  ThreadSettingsGuard guard;
  const int affinity = CPU_COUNT(&guard.mask());
  CHECK(available_cpus() >= 1);
  CHECK(available_cpus() <= affinity);
  torch::set_num_threads(affinity + 1);
  CHECK(set_training_threads(TrainingOptions{}, torch::kCPU) == 1);
  CHECK(torch::get_num_threads() == 1);
  if (openblas_threads()) CHECK(*openblas_threads() == 1);
  torch::set_num_threads(affinity + 1);
  CHECK(set_training_threads(TrainingOptions{}, torch::Device(torch::kCUDA)) == available_cpus());
  CHECK(torch::get_num_threads() == available_cpus());

  // Pinned to one CPU, the process is given one core.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &guard.mask())) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  CHECK(available_cpus() == 1);
  CHECK(set_training_threads(TrainingOptions{}, torch::Device(torch::kCUDA)) == 1);

  // OMP_NUM_THREADS, as LibTorch read it at start-up, even while SingleThreadedKernels is in force.
  setenv("OMP_NUM_THREADS", "3", 1);
  const SingleThreadedKernels single_threaded;
  CHECK(training_threads(TrainingOptions{}, torch::kCPU) == 3);
  CHECK(set_training_threads(TrainingOptions{}, torch::Device(torch::kCUDA)) == 3);
}

TEST_CASE("training threads: the same seed and the same threads train the same weights") {
  ThreadSettingsGuard guard;
  for (const int threads : {1, 2}) {
    TrainingOptions options = test::tiny_training(1, 4);
    options.threads = threads;
    REQUIRE(set_training_threads(options, torch::kCPU) == threads);
    auto first = test::tiny_trainer(options);
    first->fit();
    auto second = test::tiny_trainer(options);
    second->fit();
    CHECK(test::same_state(test::state_of(first->approximator()), test::state_of(second->approximator())));
  }
}

TEST_CASE("training threads: training.threads is read, written back, and checked") {
  const TrialConfig config = parse_trial_config({{"training", {{"threads", 2}}}}, "study.json");
  CHECK(config.training.threads == 2);
  CHECK(parse_trial_config(config.to_json(), "export.json").training.threads == 2);
  CHECK(parse_trial_config(nlohmann::json::object(), "study.json").training.threads == 0);
  for (const auto& bad : {nlohmann::json(0), nlohmann::json(-1), nlohmann::json(1.5), nlohmann::json("4")}) {
    try {
      parse_trial_config({{"training", {{"threads", bad}}}}, "study.json");
      FAIL("threads " << bad.dump() << " accepted");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()).find("training.threads") != std::string::npos);
    }
  }
  try {
    parse_trial_config({{"training", {{"thread", 2}}}}, "study.json");
    FAIL("an unknown key accepted");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("'training.threads'") != std::string::npos);
  }
}

TEST_CASE("work on workers: every task runs once, with no gradient; an error is rethrown") {
  constexpr int64_t kTasks = 7;
  std::vector<std::atomic<int>> runs(kTasks);
  std::atomic<bool> no_grad{true};
  bfhpo::trials::for_each_on_workers(kTasks, [&](int64_t task) {
    runs[static_cast<size_t>(task)]++;
    if (torch::GradMode::is_enabled()) no_grad = false;
  });
  for (const auto& count : runs) CHECK(count == 1);
  CHECK(no_grad);
  CHECK_THROWS_WITH(bfhpo::trials::for_each_on_workers(kTasks,
                                                       [](int64_t task) {
                                                         if (task == 5) throw std::runtime_error("task 5 failed");
                                                       }),
                    "task 5 failed");
}
