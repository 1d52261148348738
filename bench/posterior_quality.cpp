// Posterior quality of the amortized estimator against a reference posterior
// (issue 18 point 4). For each model: trains the approximator for a fixed CPU
// budget (the step count that fits the budget is measured first on 30 steps
// of a throwaway trainer, so the learning-rate schedule runs to its end), then
//   1. the training evaluation (trials::evaluate_posterior: calibration error,
//      SBC rank KS distance, recovery r, NRMSE, contraction per parameter) on
//      --eval-datasets simulated datasets;
//   2. on --mcmc-datasets held-out datasets, the reference posterior by
//      infer --refine's sampler of the exact posterior (inference/posterior_refinement.hpp:
//      abilities integrated out, 4 chains started from prior draws, split
//      R-hat; it agrees with Stan's NUTS on real data to 0.02-0.04 Stan sd)
//      and the amortized one, the same diagnostics for both, and per item
//      parameter the agreement: r(amortized mean, MCMC mean) and the ratio of
//      posterior sds (amortized / MCMC).
// On the 2PL it prints issue 18's targets and whether each holds.
//
//   bench_posterior_quality [--models 2pl,rasch,3pl,grm] [--train-seconds 1200]
//       [--steps N (instead of a time budget)] [--config FILE (a trial config,
//       {"seed", "simulator", "training", "approximator"}, merged over the
//       defaults below)] [--eval-datasets 64] [--mcmc-datasets 20]
//       [--mcmc-sweeps 3000] [--threads 1]
#include "memory/cpu_memory_tracking.hpp"
#include "models/diagnostics.hpp"
#include "trials/evaluation.hpp"
#include "inference/posterior_refinement.hpp"
#include "trials/trainer.hpp"
#include "trials/training_threads.hpp"
#include "trials/trial_config.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace bfhpo;
using nlohmann::json;

namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// The quickstart's shapes and the settings of its best trials.
json default_config(const std::string& model) {
  json simulator = {{"model", model}, {"n_items", {10, 20}}, {"n_persons", {100, 200}}};
  if (model == "grm") simulator["n_categories"] = 4;
  return {{"seed", 1},
          {"simulator", simulator},
          {"training", {{"epochs", 1}, {"num_batches", 100}, {"batch_size", 16}, {"learning_rate", 1e-3},
                        {"validation_sims", 32}, {"device", "cpu"}}},
          {"approximator", {{"summary", {{"attention_layers", 1}}}, {"flow", {{"depth", 4}}}}}};
}

struct Arguments {
  std::vector<std::string> models{"2pl", "rasch", "3pl", "grm"};
  double train_seconds = 1200.0;
  int steps = 0;
  json config_patch = json::object();
  int64_t eval_datasets = 64;
  int64_t mcmc_datasets = 20;
  int64_t mcmc_sweeps = 3000;
  int threads = 1;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) out.push_back(item);
  return out;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--models") a.models = split_list(value);
    else if (key == "--train-seconds") a.train_seconds = std::stod(value);
    else if (key == "--steps") a.steps = std::stoi(value);
    else if (key == "--config") a.config_patch = json::parse(std::ifstream(value));
    else if (key == "--eval-datasets") a.eval_datasets = std::stoll(value);
    else if (key == "--mcmc-datasets") a.mcmc_datasets = std::stoll(value);
    else if (key == "--mcmc-sweeps") a.mcmc_sweeps = std::stoll(value);
    else if (key == "--threads") a.threads = std::stoi(value);
    else throw std::invalid_argument("unknown option " + key + " (see the comment at the top of posterior_quality.cpp)");
  }
  if (argc % 2 == 0) throw std::invalid_argument(std::string("option without a value: ") + argv[argc - 1]);
  return a;
}

// Steps that fit `seconds` of CPU time: 30 steps of a throwaway trainer, timed
// after 5 warm-up steps (shapes are drawn per step; with 1 warm-up and 10
// timed steps the runs used only ~70% of their budget).
int steps_for_budget(const trials::TrialConfig& config, double seconds) {
  constexpr int kWarmUp = 5, kTimed = 30;
  auto probe_options = config.training;
  probe_options.epochs = 1;
  probe_options.num_batches = kWarmUp + kTimed;
  trials::Trainer probe(models::make_approximator(config.approximator, config.training.seed), config.simulator,
                        probe_options, torch::kCPU);
  for (int i = 0; i < kWarmUp; ++i) probe.train_step();
  const double start = cpu_seconds();
  for (int i = 0; i < kTimed; ++i) probe.train_step();
  const double per_step = (cpu_seconds() - start) / kTimed;
  return std::max(1, static_cast<int>(seconds / per_step * 0.97));  // 3%: validation passes
}

double pearson(const torch::Tensor& x, const torch::Tensor& y) {
  const auto xc = x - x.mean(), yc = y - y.mean();
  return ((xc * yc).sum() / (xc.square().sum() * yc.square().sum()).sqrt()).item<double>();
}

struct HeldOut {
  torch::Tensor amortized, mcmc, truths;  // [N, S, D], [N, S', D], [N, D] over every item of every dataset
  std::vector<double> max_rhats;          // one a dataset: its largest split R-hat
  double acceptance = 0.0, mcmc_cpu_seconds = 0.0;
};

HeldOut held_out_comparison(models::ContinuousApproximatorImpl& approximator, const models::SimulatorSpec& spec,
                            const Arguments& args) {
  torch::NoGradGuard no_grad;
  approximator.eval();
  const models::Simulator simulator(spec, 0x4E1D0017ULL, torch::kCPU);  // seeds no training or evaluation uses
  std::vector<torch::Tensor> amortized, mcmc, truths;
  HeldOut out;
  inference::RefinementOptions options;
  options.method = "mcmc";
  options.warmup_sweeps = args.mcmc_sweeps / 3;
  options.sampling_sweeps = args.mcmc_sweeps - options.warmup_sweeps;
  for (int64_t i = 0; i < args.mcmc_datasets; ++i) {
    const auto batch = simulator.sample(1, static_cast<uint64_t>(i));
    const int64_t items = batch.item_params.size(1), d = batch.item_params.size(-1);
    amortized.push_back(approximator.sample(1000, batch.responses, batch.mask).first[0].to(torch::kFloat64));
    // The reference starts from the prior, not from the posterior it is compared with.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(2000 + static_cast<uint64_t>(i));
    inference::PosteriorDraws prior;
    prior.item_names.resize(items);
    prior.draws = simulator.model().draw_item_params(1000, items, generator).transpose(0, 1).contiguous();
    prior.log_prob = torch::zeros({items, 1000}, torch::kFloat32);
    inference::ResponseMatrix data;
    data.item_names = prior.item_names;
    data.responses = batch.responses[0];
    data.mask = batch.mask[0];
    options.seed = 1000 + static_cast<uint64_t>(i);
    const double start = cpu_seconds();
    const auto reference = inference::refine_posterior(simulator.model(), data, prior, options);
    out.mcmc_cpu_seconds += cpu_seconds() - start;
    mcmc.push_back(reference.posterior.draws.to(torch::kFloat64));
    out.max_rhats.push_back(reference.max_rhat);
    truths.push_back(batch.item_params[0].to(torch::kFloat64).reshape({-1, d}));
    out.acceptance += reference.acceptance / static_cast<double>(args.mcmc_datasets);
  }
  out.amortized = torch::cat(amortized);
  out.mcmc = torch::cat(mcmc);
  out.truths = torch::cat(truths);
  return out;
}

struct Agreement {
  double r_means = 0.0;        // r(amortized mean, MCMC mean) over items
  double sd_ratio_median = 0.0;  // median over items of amortized sd / MCMC sd
  double within_20 = 0.0;      // share of items whose sd ratio is in [0.8, 1.25]
  double mcmc_sd = 0.0, amortized_sd = 0.0;  // mean posterior sds
  double max_rhat = 0.0;       // over the datasets' chains, every parameter
};

Agreement agreement(const HeldOut& h, int64_t d) {
  const auto am = h.amortized.select(-1, d), mc = h.mcmc.select(-1, d);
  const auto ratio = am.std(1) / mc.std(1);
  return {pearson(am.mean(1), mc.mean(1)), ratio.median().item<double>(),
          (ratio >= 0.8).logical_and(ratio <= 1.25).to(torch::kFloat64).mean().item<double>(),
          mc.std(1).mean().item<double>(), am.std(1).mean().item<double>(),
          *std::max_element(h.max_rhats.begin(), h.max_rhats.end())};
}

void print_held_out(const HeldOut& h, const std::vector<std::string>& names, const torch::Tensor& prior_variance) {
  const auto amortized = models::compute_diagnostics(h.amortized, h.truths, prior_variance, names);
  const auto mcmc = models::compute_diagnostics(h.mcmc, h.truths, prior_variance, names);
  std::printf("  held out: %lld items; MCMC %.0f CPU s, random-walk acceptance %.2f\n",
              static_cast<long long>(h.truths.size(0)), h.mcmc_cpu_seconds, h.acceptance);
  std::printf("  %-8s %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s %7s %7s %7s %7s\n", "param", "cal_am", "cal_mc",
              "r_am", "r_mc", "nrmse_a", "nrmse_m", "ctr_am", "ctr_mc", "r(a,m)", "sd_am", "sd_mc", "sd_rat", "in20%",
              "rhat");
  for (size_t d = 0; d < names.size(); ++d) {
    const auto& a = amortized.parameters[d];
    const auto& m = mcmc.parameters[d];
    const auto g = agreement(h, static_cast<int64_t>(d));
    std::printf("  %-8s %7.4f %7.4f | %7.4f %7.4f | %7.4f %7.4f | %7.4f %7.4f | %7.4f %7.4f %7.4f %7.3f %7.2f %7.3f\n",
                names[d].c_str(), a.calibration_error, m.calibration_error, a.correlation, m.correlation, a.nrmse,
                m.nrmse, a.contraction, m.contraction, g.r_means, g.amortized_sd, g.mcmc_sd, g.sd_ratio_median,
                g.within_20, g.max_rhat);
  }
}

// Issue 18's targets on the 2PL.
void print_targets(const models::Diagnostics& evaluation, const HeldOut& h, const std::vector<std::string>& names) {
  const auto mcmc = models::compute_diagnostics(h.mcmc, h.truths, torch::ones({2}, torch::kFloat64), names);
  const auto amortized = models::compute_diagnostics(h.amortized, h.truths, torch::ones({2}, torch::kFloat64), names);
  const auto check = [](const char* what, double value, bool holds) {
    std::printf("  target %-52s %8.4f  %s\n", what, value, holds ? "holds" : "MISSED");
  };
  for (const auto& p : evaluation.parameters)
    check(("calibration error " + p.name + " <= 0.03 (evaluation)").c_str(), p.calibration_error,
          p.calibration_error <= 0.03);
  check("r(b) >= 0.95 (evaluation)", evaluation.parameters[1].correlation, evaluation.parameters[1].correlation >= 0.95);
  check("r(log_a) >= 0.7 (evaluation)", evaluation.parameters[0].correlation,
        evaluation.parameters[0].correlation >= 0.7);
  const double gap = mcmc.parameters[0].correlation - amortized.parameters[0].correlation;
  check("MCMC r(log_a) - amortized r(log_a) <= 0.1 (held out)", gap, gap <= 0.1);
  for (int64_t d = 0; d < 2; ++d) {
    const double ratio = agreement(h, d).sd_ratio_median;
    check(("median sd ratio " + names[static_cast<size_t>(d)] + " amortized/MCMC in [0.8, 1.2]").c_str(), ratio,
          ratio >= 0.8 && ratio <= 1.2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  try {
    args = parse(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_posterior_quality: %s\n", error.what());
    return 2;
  }
  // As a trial on the CPU: the tracking allocator, whose cache of freed large blocks (and glibc's heap
  // policy) spares each step the page faults of fresh memory, and the threads set as a trial sets them.
  memory::install_cpu_memory_tracking();
  trials::TrainingOptions thread_options;
  thread_options.threads = args.threads;
  const int threads = trials::set_training_threads(thread_options, torch::kCPU);
  std::printf("CPU, %d training threads; budget %s; %lld evaluation datasets x 200 draws; %lld held-out datasets, "
              "MCMC 4 chains x %lld sweeps (a third warm-up), 1000 amortized draws\n",
              threads,
              args.steps > 0 ? (std::to_string(args.steps) + " steps").c_str()
                             : (std::to_string(static_cast<int>(args.train_seconds)) + " CPU s").c_str(),
              static_cast<long long>(args.eval_datasets), static_cast<long long>(args.mcmc_datasets),
              static_cast<long long>(args.mcmc_sweeps));
  for (const auto& model : args.models) {
    json document = default_config(model);
    document.merge_patch(args.config_patch);
    document["simulator"]["model"] = model;
    if (model != "grm") document["simulator"].erase("n_categories");
    auto config = trials::parse_trial_config(document, "bench_posterior_quality");
    const int steps = args.steps > 0 ? args.steps : steps_for_budget(config, args.train_seconds);
    config.training.num_batches = std::min(config.training.num_batches, steps);
    config.training.epochs = std::max(1, (steps + config.training.num_batches - 1) / config.training.num_batches);
    std::printf("\n== %s: %d epochs x %d steps, config %s\n", model.c_str(), config.training.epochs,
                config.training.num_batches, config.to_json().dump().c_str());
    std::fflush(stdout);
    auto approximator = models::make_approximator(config.approximator, config.training.seed);
    trials::Trainer trainer(approximator, config.simulator, config.training, torch::kCPU);
    const double cpu_start = cpu_seconds();
    const auto wall_start = std::chrono::steady_clock::now();
    const auto summary = trainer.fit({}, {});
    std::printf("  trained %d steps in %.0f CPU s (%.0f wall s), validation NLL %.4f (%s)\n", summary.steps_completed,
                cpu_seconds() - cpu_start,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(),
                summary.validation_loss, trials::to_string(summary.reason).c_str());
    trials::EvaluationOptions evaluation_options;
    evaluation_options.n_datasets = args.eval_datasets;
    evaluation_options.n_draws = 200;
    const auto evaluation =
        trials::evaluate_posterior(*approximator, config.simulator, evaluation_options, torch::kCPU).diagnostics;
    std::printf("  evaluation (%lld items):\n%s", static_cast<long long>(evaluation.n_datasets),
                evaluation.table().c_str());
    std::fflush(stdout);
    const models::Simulator simulator(config.simulator, 0, torch::kCPU);
    const auto held_out = held_out_comparison(*approximator, config.simulator, args);
    print_held_out(held_out, simulator.parameter_names(), simulator.prior_variance());
    if (model == "2pl") print_targets(evaluation, held_out, simulator.parameter_names());
    std::fflush(stdout);
  }
  return 0;
}
