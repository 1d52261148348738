// Training throughput on CPU for the reference IRT configuration.
//
// Table mode: the default ApproximatorSpec, B datasets a step, J in [15,
// max_items], P in [150, max_persons] (the 2PL simulator's defaults: 50 and
// 500). For plain vs calibrated, unchunked vs item chunk 10, checkpointed vs
// not, runs one warm-up step and then `steps` timed Trainer::train_step calls
// on the same batch indices, and prints steps per second and the share of the
// step time the simulator takes (the same batches simulated again on their
// own, timed).
//
//   bench_train_throughput [steps=3] [batch_size=32] [max_items=50] [max_persons=500]
//
// Worker mode, driven by bench/train_vs_pytorch.py: builds the default plain
// approximator (seed 0) with the given item chunk (0: none) and
// checkpointing, simulates `batches` batches of the given shape ranges,
// writes the initial parameters and buffers (by name) and the batches to
// `state_file` (torch::pickle_save, read by Python's torch.load), prints
// "ready <parameter count>", then answers each "steps N" line on stdin with
// "seconds <wall time of N Trainer::train_step calls> cpu <their user + system
// CPU seconds> faults <their minor page faults> losses <N losses>", cycling
// through the batches, until "quit". The CPU tracking allocator is
// installed first, as a trial's memory meter does, and the threads set as a
// trial's are (trials::set_training_threads: LibTorch's and OpenBLAS's).
//
//   bench_train_throughput worker B J_min J_max P_min P_max chunk checkpointing threads batches state_file
#include "memory/cpu_memory_tracking.hpp"
#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/trainer.hpp"
#include "trials/training_threads.hpp"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This process's user + system CPU seconds and minor page faults so far.
struct ProcessUsage {
  double cpu_seconds;
  long minor_faults;
};

ProcessUsage process_usage() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return {seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_minflt};
}

struct Setting {
  bool calibrated;
  std::optional<int64_t> item_chunk;
  bool checkpointing;
};

std::string describe(const Setting& s) {
  return std::string(s.calibrated ? "calibrated" : "plain") + " chunk=" +
         (s.item_chunk ? std::to_string(*s.item_chunk) : std::string("all")) +
         (s.checkpointing ? " checkpointed" : "");
}

int run_worker(int argc, char** argv) {
  if (argc != 12) {
    std::fprintf(stderr,
                 "usage: bench_train_throughput worker B J_min J_max P_min P_max chunk checkpointing threads "
                 "batches state_file\n");
    return 2;
  }
  const int64_t batch_size = std::atoll(argv[2]);
  models::SimulatorSpec simulator_spec;
  simulator_spec.ranges = {std::atoll(argv[3]), std::atoll(argv[4]), std::atoll(argv[5]), std::atoll(argv[6])};
  const int64_t chunk = std::atoll(argv[7]);
  const bool checkpointing = std::atoi(argv[8]) != 0;
  const int threads = std::atoi(argv[9]);
  const int n_batches = std::atoi(argv[10]);
  const std::string state_file = argv[11];
  if (batch_size < 1 || threads < 1 || n_batches < 1) {
    std::fprintf(stderr, "bench_train_throughput worker: B, threads and batches must be >= 1\n");
    return 2;
  }
  memory::install_cpu_memory_tracking();

  trials::TrainingOptions options;
  options.threads = threads;
  trials::set_training_threads(options, torch::kCPU);
  options.batch_size = batch_size;
  options.epochs = 1;
  options.num_batches = 1 << 24;  // a learning rate constant to 1e-9 over any bench run
  options.warmup_fraction = 0.0;
  models::ApproximatorSpec spec;
  if (chunk > 0) spec.memory.item_chunk_size = chunk;
  spec.memory.gradient_checkpointing = checkpointing;
  torch::manual_seed(0);
  trials::Trainer trainer(models::make_approximator(spec, 0), simulator_spec, options, torch::kCPU);

  const models::Simulator simulator(simulator_spec, options.seed, torch::kCPU);
  std::vector<models::SimulatedBatch> batches;
  c10::Dict<std::string, torch::Tensor> state;
  for (int i = 0; i < n_batches; ++i) {
    batches.push_back(simulator.sample(batch_size, static_cast<uint64_t>(i)));
    const std::string prefix = "batch" + std::to_string(i) + ".";
    state.insert(prefix + "responses", batches.back().responses);
    state.insert(prefix + "mask", batches.back().mask);
    state.insert(prefix + "item_params", batches.back().item_params);
  }
  int64_t parameters = 0;
  for (const auto& p : trainer.approximator().named_parameters()) {
    state.insert(p.key(), p.value().detach());
    parameters += p.value().numel();
  }
  for (const auto& b : trainer.approximator().named_buffers()) state.insert(b.key(), b.value());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(state));
  std::ofstream(state_file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::cout << "ready " << parameters << std::endl;

  size_t next = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream command(line);
    std::string verb;
    int steps = 0;
    command >> verb >> steps;
    if (verb == "quit") break;
    if (verb != "steps" || steps < 1) {
      std::cerr << "bench_train_throughput worker: expected \"steps N\" or \"quit\", got \"" << line << "\"\n";
      return 2;
    }
    std::vector<double> losses;
    const ProcessUsage usage_before = process_usage();
    const auto start = Clock::now();
    for (int i = 0; i < steps; ++i) losses.push_back(trainer.train_step(batches[next++ % batches.size()]));
    const double seconds = seconds_since(start);
    const ProcessUsage usage_after = process_usage();
    std::ostringstream reply;
    reply.precision(9);
    reply << "seconds " << seconds << " cpu " << usage_after.cpu_seconds - usage_before.cpu_seconds << " faults "
          << usage_after.minor_faults - usage_before.minor_faults << " losses";
    for (const double loss : losses) reply << ' ' << loss;
    std::cout << reply.str() << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "worker") return run_worker(argc, argv);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 3;
  const int64_t batch_size = argc > 2 ? std::atoll(argv[2]) : 32;
  models::SimulatorSpec simulator_spec;
  models::IrtRanges& ranges = simulator_spec.ranges;
  if (argc > 3) ranges.max_items = std::atoll(argv[3]);
  if (argc > 4) ranges.max_persons = std::atoll(argv[4]);
  if (steps < 1 || batch_size < 1 || ranges.max_items < ranges.min_items || ranges.max_persons < ranges.min_persons) {
    std::fprintf(stderr, "usage: bench_train_throughput [steps>=1] [batch_size>=1] [max_items>=15] [max_persons>=150]\n");
    return 2;
  }
  trials::TrainingOptions options;
  options.batch_size = batch_size;
  options.epochs = 1;
  options.num_batches = steps + 1;

  // Simulator time of the timed batches (indices 1..steps), as train_step draws them.
  const models::Simulator simulator(simulator_spec, options.seed, torch::kCPU);
  int64_t cells = 0;
  const auto sim_start = Clock::now();
  for (int i = 1; i <= steps; ++i) cells += simulator.sample(batch_size, static_cast<uint64_t>(i)).responses.numel();
  const double sim_seconds = seconds_since(sim_start) / steps;

  std::printf("CPU, %d torch threads; B=%lld, J in [%lld, %lld], P in [%lld, %lld]; %d timed steps, "
              "%.0f response cells a step on average; default spec\n",
              torch::get_num_threads(), static_cast<long long>(batch_size), static_cast<long long>(ranges.min_items),
              static_cast<long long>(ranges.max_items), static_cast<long long>(ranges.min_persons),
              static_cast<long long>(ranges.max_persons), steps, static_cast<double>(cells) / steps);
  std::printf("%-36s %10s %10s %10s\n", "configuration", "steps/s", "s/step", "sim share");
  for (const bool calibrated : {false, true}) {
    for (const auto chunk : {std::optional<int64_t>{}, std::optional<int64_t>{10}}) {
      for (const bool checkpointing : {false, true}) {
        const Setting setting{calibrated, chunk, checkpointing};
        models::ApproximatorSpec spec;
        spec.calibration.enabled = calibrated;
        spec.memory = {chunk, checkpointing, std::nullopt};
        torch::manual_seed(0);
        trials::Trainer trainer(models::make_approximator(spec, 0), simulator_spec, options, torch::kCPU);
        trainer.train_step();  // warm-up: allocator, actnorm initialisation
        const auto start = Clock::now();
        for (int i = 0; i < steps; ++i) trainer.train_step();
        const double step_seconds = seconds_since(start) / steps;
        std::printf("%-36s %10.3f %10.3f %9.1f%%\n", describe(setting).c_str(), 1.0 / step_seconds, step_seconds,
                    100.0 * sim_seconds / step_seconds);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
