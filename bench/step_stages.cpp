// A training step's arithmetic, stage by stage, against this CPU's peak
// (issue 41 part 4):
//
//   bench_step_stages CONFIG.json [B=32] [P] [J] [steps=5] [threads=1]
//
// CONFIG.json: a training study or a config.json `bfhpo train` wrote; P and
// J default to the middle of its simulator's ranges (init's shapes: the
// 2PL 1,248 x 16 and the GRM K 6 300 x 5 of the issue). On one thread
// (LibTorch's and OpenBLAS's, as a CPU trial trains), with the CPU tracking
// allocator a trial trains with, it measures:
//   peak     a 1024^3 float32 matrix multiply, the best of 5: the rate the
//            stages are held against;
//   stages   each of the network's stages built from the configuration
//            (the model's own modules) and run forward and backward on
//            inputs of a step's shapes, the best of `steps` runs:
//            cell MLP (phi's layers on every cell: B x P x J rows),
//            pooling (the masked mean over persons), item fit (the EM
//            fit, forward only: it takes no gradient), attention (the
//            SetTransformer blocks over B sets of J items), flow (log q of
//            one draw per item: B x J rows) and the optimizer (Adam over
//            every parameter of the whole approximator);
//   step     trials::Trainer::train_step on simulated batches of that
//            shape (the mean of `steps` after one warm-up), the simulation
//            alone, and the step's user and system CPU seconds and minor
//            page faults (getrusage); with threads > 1 the step again on
//            that many training threads (the batch in parts side by side,
//            trials/split_step.hpp) and its ratio to one thread's.
// FLOPs are counted from the configuration: 2 m n k a matrix product,
// backward twice forward; elementwise work (activations, norms, softmax) is
// not counted, so a stage's rate is a lower bound on its arithmetic's.
// The closing lines: the step's time outside the stages (simulation,
// allocation, the autograd engine, page faults), its floor at peak, and the
// step's rate.
#include "memory/cpu_memory_tracking.hpp"
#include "models/approximator.hpp"
#include "models/networks/coupling_flow.hpp"
#include "models/networks/item_fit.hpp"
#include "models/networks/mlp.hpp"
#include "models/networks/set_attention_block.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/trainer.hpp"
#include "trials/training_threads.hpp"
#include "trials/trial_config.hpp"
#include "common/config_reader.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

using namespace bfhpo;

namespace {

using Clock = std::chrono::steady_clock;

double best_seconds(int runs, const std::function<void()>& work) {
  work();  // warm-up: the allocator's cache, OpenBLAS's buffers
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    work();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

struct Usage {
  double user, system;
  long minor_faults;
  static Usage now() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return {static_cast<double>(u.ru_utime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec),
            static_cast<double>(u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_stime.tv_usec), u.ru_minflt};
  }
};

// 2 m n k for an [m, k] x [k, n] product, in GFLOP.
double product_gflop(double m, double k, double n) { return 2.0 * m * k * n / 1e9; }

// Forward FLOPs of an Mlp on `rows` rows: in -> widths..., in GFLOP.
double mlp_gflop(double rows, int64_t in, const std::vector<int64_t>& widths) {
  double total = 0.0;
  double from = static_cast<double>(in);
  for (const int64_t width : widths) {
    total += product_gflop(rows, from, static_cast<double>(width));
    from = static_cast<double>(width);
  }
  return total;
}

void print_stage(const char* name, double gflop, double seconds, double peak) {
  std::printf("%-12s %10.3f %10.4f %10.1f %8.1f%%\n", name, gflop, seconds, gflop / seconds, 100.0 * gflop / seconds / peak);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_step_stages CONFIG.json [B=32] [P] [J] [steps=5] [threads=1]\n");
    return 2;
  }
  const auto config = trials::parse_trial_config(read_config_file(argv[1], "configuration"), argv[1]);
  const auto& ranges = config.simulator.ranges;
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 32;
  const int64_t persons = argc > 3 ? std::stoll(argv[3]) : (ranges.min_persons + ranges.max_persons) / 2;
  const int64_t items = argc > 4 ? std::stoll(argv[4]) : (ranges.min_items + ranges.max_items) / 2;
  const int steps = argc > 5 ? std::stoi(argv[5]) : 5;
  const int step_threads = argc > 6 ? std::stoi(argv[6]) : 1;
  memory::install_cpu_memory_tracking();  // as a trial's memory meter does: its cache of freed large blocks
  trials::TrainingOptions one_thread;
  one_thread.threads = 1;
  trials::set_training_threads(one_thread, torch::kCPU);
  torch::manual_seed(1);

  const auto& spec = config.approximator;
  const auto& summary = spec.summary;
  const int64_t k = spec.n_categories, d = spec.param_dim;
  const double cells = static_cast<double>(batch * persons * items), rows = static_cast<double>(batch * items);
  std::printf("%s: %s, B %lld x P %lld x J %lld (%.0f cells), K %lld, one thread\n", argv[1],
              config.simulator.model.c_str(), static_cast<long long>(batch), static_cast<long long>(persons),
              static_cast<long long>(items), cells, static_cast<long long>(k));

  const auto a = torch::randn({1024, 1024}), b = torch::randn({1024, 1024});
  const double peak = product_gflop(1024, 1024, 1024) / best_seconds(5, [&] { torch::mm(a, b); });
  std::printf("peak: %.1f GFLOP/s (1024^3 float32 product, one thread)\n\n", peak);
  std::printf("%-12s %10s %10s %10s %9s\n", "stage", "GFLOP", "seconds", "GFLOP/s", "of peak");

  double stage_seconds = 0.0, stage_gflop = 0.0;
  const auto stage = [&](const char* name, double gflop, const std::function<void()>& work) {
    const double seconds = best_seconds(steps, work);
    stage_seconds += seconds;
    stage_gflop += gflop;
    print_stage(name, gflop, seconds, peak);
  };

  // Cell MLP: phi's hidden layers on every cell (its last layer acts on the pooled mean), forward and backward.
  const int64_t features = models::n_cell_features(k);
  std::vector<int64_t> hidden(static_cast<size_t>(summary.cell_mlp_depth), summary.cell_mlp_width);
  models::Mlp phi(models::MlpOptions{features, hidden, summary.activation, 0.0, false});
  const auto cell_input = torch::randn({batch * persons * items, features});
  stage("cell MLP", 3.0 * mlp_gflop(cells, features, hidden), [&] {
    phi->zero_grad();
    phi->forward(cell_input).sum().backward();
  });

  // Pooling: the masked mean over persons of the cells' hidden activations, forward and backward.
  const int64_t width = hidden.empty() ? features : hidden.back();
  const auto activations = torch::randn({batch, persons, items, width}, torch::requires_grad());
  const auto mask = (torch::rand({batch, persons, items, 1}) < 0.9).to(torch::kFloat32);
  stage("pooling", 0.0, [&] {
    ((activations * mask).sum(1) / mask.sum(1).clamp_min(1.0)).sum().backward();
  });

  // Item fit: kItemFitIterations EM rounds, two [P, J K] x [J K, Q] products each; no gradient.
  if (summary.item_fit) {
    const auto responses = torch::randint(0, k, {batch, persons, items}).to(torch::kFloat32);
    const auto observed = torch::ones({batch, persons, items});
    stage("item fit",
          static_cast<double>(models::kItemFitIterations) * 2.0 *
              product_gflop(static_cast<double>(batch * persons), static_cast<double>(items * k),
                            static_cast<double>(models::kItemFitNodes)),
          [&] {
            torch::NoGradGuard no_grad;
            models::fit_items(responses, observed, k);
          });
  }

  // Attention: the SetTransformer blocks over B sets of J items, forward and backward.
  torch::nn::Sequential blocks;
  for (int64_t l = 0; l < summary.attention_layers; ++l)
    blocks->push_back(models::SetAttentionBlock(
        models::SetAttentionBlockOptions{summary.embed_dim, summary.attention_heads, 0.0, summary.activation}));
  const auto embedded = torch::randn({batch, items, summary.embed_dim});
  const double e = static_cast<double>(summary.embed_dim), j = static_cast<double>(items);
  const double attention_layer = product_gflop(rows, e, 4.0 * e) +                      // Q, K, V and out projections
                                 2.0 * product_gflop(static_cast<double>(batch) * j, e, j) +  // scores, weighted sum
                                 2.0 * product_gflop(rows, e, e);                        // the feed-forward Mlp
  stage("attention", 3.0 * static_cast<double>(summary.attention_layers) * attention_layer, [&] {
    blocks->zero_grad();
    blocks->forward(embedded).sum().backward();
  });

  // Flow: log q of one draw per item given its condition (item context, global summary, item fit).
  const int64_t context = summary.embed_dim + summary.summary_dim + (summary.item_fit ? k : 0);
  models::CouplingFlow flow(d, context, spec.flow, 1);
  const auto theta = torch::randn({batch * items, d}), condition = torch::randn({batch * items, context});
  flow->log_prob(theta, condition);  // actnorm's data-dependent initialisation, outside the timing
  const int64_t first = d / 2;
  std::vector<int64_t> subnet(static_cast<size_t>(spec.flow.subnet_depth), spec.flow.subnet_width);
  auto subnet1 = subnet, subnet2 = subnet;
  subnet1.push_back(2 * (d - first));
  subnet2.push_back(2 * first);
  const double coupling = mlp_gflop(rows, first + context, subnet1) + (first > 0 ? mlp_gflop(rows, d - first + context, subnet2) : 0.0);
  stage("flow", 3.0 * static_cast<double>(spec.flow.depth) * coupling, [&] {
    flow->zero_grad();
    flow->log_prob(theta, condition).sum().backward();
  });

  // Optimizer: one Adam step over the whole approximator's parameters (about 10 FLOPs a parameter, not counted).
  auto approximator = models::make_approximator(spec, 1);
  int64_t parameters = 0;
  for (auto& p : approximator->parameters()) {
    p.mutable_grad() = torch::randn_like(p);
    parameters += p.numel();
  }
  torch::optim::Adam adam(approximator->parameters(), torch::optim::AdamOptions(1e-4));
  stage("optimizer", 0.0, [&] { adam.step(); });

  // The whole step, and the simulation inside it: on one thread, then on `step_threads` (its batch in parts side
  // by side: trials/split_step.hpp).
  auto simulator_spec = config.simulator;
  simulator_spec.ranges = {items, items, persons, persons};
  struct StepTiming {
    double seconds = 0.0;
    Usage before, after;
  };
  const auto time_steps = [&](int threads) {
    trials::TrainingOptions options = config.training;
    options.threads = threads;
    options.batch_size = batch;
    options.validation_sims = 1;
    options.epochs = 1;
    options.num_batches = steps + 1;
    trials::set_training_threads(options, torch::kCPU);
    torch::manual_seed(1);
    trials::Trainer trainer(models::make_approximator(spec, 1), simulator_spec, options, torch::kCPU);
    trainer.train_step();  // warm-up: actnorm, standardization, the allocator
    StepTiming timing;
    timing.before = Usage::now();
    const auto start = Clock::now();
    for (int s = 0; s < steps; ++s) trainer.train_step();
    timing.seconds = std::chrono::duration<double>(Clock::now() - start).count() / steps;
    timing.after = Usage::now();
    return timing;
  };
  const StepTiming one = time_steps(1);
  const StepTiming split = step_threads > 1 ? time_steps(step_threads) : one;
  const double step = one.seconds;
  const auto before = one.before, after = one.after;
  const models::Simulator simulator(simulator_spec, 2, torch::kCPU);
  const double simulation = best_seconds(steps, [&] { simulator.sample(batch, 0); });

  std::printf("%-12s %10.3f %10.4f %10.1f %8.1f%%   (the stages above)\n", "stages", stage_gflop, stage_seconds,
              stage_gflop / stage_seconds, 100.0 * stage_gflop / stage_seconds / peak);
  std::printf("%-12s %10s %10.4f\n", "simulation", "", simulation);
  std::printf("%-12s %10.3f %10.4f %10.1f %8.1f%%   (Trainer::train_step, mean of %d)\n", "step", stage_gflop, step,
              stage_gflop / step, 100.0 * stage_gflop / step / peak, steps);
  std::printf("\n%lld parameters; a step at peak would take %.4f s; outside the stages and the simulation: %.4f s "
              "(%.0f%% of the step)\n",
              static_cast<long long>(parameters), stage_gflop / peak, step - stage_seconds - simulation,
              100.0 * (step - stage_seconds - simulation) / step);
  std::printf("a step's CPU: %.4f s user, %.4f s system, %.0f minor page faults\n", (after.user - before.user) / steps,
              (after.system - before.system) / steps,
              static_cast<double>(after.minor_faults - before.minor_faults) / steps);
  if (step_threads > 1) {
    std::printf("on %d threads (the batch in %d parts side by side): %.4f s a step, %.2fx one thread's; CPU %.4f s "
                "user, %.4f s system\n",
                step_threads, step_threads, split.seconds, step / split.seconds,
                (split.after.user - split.before.user) / steps, (split.after.system - split.before.system) / steps);
  }
  return 0;
}
