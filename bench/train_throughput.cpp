// Training throughput on CPU for the reference IRT configuration: the default
// ApproximatorSpec, B datasets a step, J in [15, max_items], P in [150,
// max_persons] (the 2PL simulator's defaults: 50 and 500). For plain vs calibrated,
// unchunked vs item chunk 10, checkpointed vs not, runs one warm-up step and
// then `steps` timed Trainer::train_step calls on the same batch indices, and
// prints steps per second and the share of the step time the simulator takes
// (the same batches simulated again on their own, timed).
//
//   bench_train_throughput [steps=3] [batch_size=32] [max_items=50] [max_persons=500]
#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/trainer.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

using namespace bfhpo;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

}  // namespace

int main(int argc, char** argv) {
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
        spec.memory = {chunk, checkpointing};
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
