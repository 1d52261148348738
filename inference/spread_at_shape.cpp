#include "inference/spread_at_shape.hpp"

#include "models/simulators/seed_mix.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <vector>

namespace bfhpo::inference {
namespace {

// Cells of the simulated sets the network reads at once (as the summary-space check's batches), and the
// flow's draws it makes at once.
constexpr int64_t kSpreadBatchCells = int64_t{1} << 16;
constexpr int64_t kSpreadBatchDraws = int64_t{1} << 16;
constexpr double kCentralLevel = 0.8;
// The simulations' seed: the spread is the estimator's at a shape, the same whatever the data's draws' seed.
constexpr uint64_t kSpreadSeed = 0x5B8EADULL;

}  // namespace

PosteriorSpread spread_at_shape(TrainedModel& model, int64_t persons, int64_t items, double missing_share,
                                int64_t draws) {
  if (missing_share >= 1.0 || persons < 1 || items < 1) return {};
  const int64_t n_draws = std::min(draws, kMostSpreadDraws);
  torch::NoGradGuard no_grad;
  models::SimulatorSpec spec = model.config.simulator;
  spec.missing = {missing_share, missing_share};
  const models::Simulator simulator(spec, kSpreadSeed, torch::kCPU);
  const int64_t sets = std::clamp((kSpreadItems + items - 1) / items, kFewestSpreadSets, kMostSpreadSets);
  const int64_t per_batch = std::max<int64_t>(
      1, std::min(kSpreadBatchCells / (persons * items), kSpreadBatchDraws / (items * n_draws)));
  const int64_t batches = (sets + per_batch - 1) / per_batch;
  // Per simulated item and parameter, the scale about the draws' mean that just takes the truth into the
  // central interval of the scaled draws.
  std::vector<torch::Tensor> needed(static_cast<size_t>(batches));
  // Each set simulated alone from its own seed, each batch's draws from its own generator: the same values
  // on any number of cores.
  trials::for_each_on_workers(batches, [&](int64_t batch) {
    std::vector<torch::Tensor> responses, masks, params;
    for (int64_t set = batch * per_batch; set < std::min(sets, (batch + 1) * per_batch); ++set) {
      const auto simulated = simulator.sample_shape(1, items, persons, static_cast<uint64_t>(set));
      responses.push_back(simulated.responses);
      masks.push_back(simulated.mask);
      params.push_back(simulated.item_params);
    }
    const auto generator =
        at::make_generator<at::CPUGeneratorImpl>(models::mix_seed(kSpreadSeed, static_cast<uint64_t>(batch)));
    const auto theta = model.approximator->sample(n_draws, torch::cat(responses), torch::cat(masks), generator).first;
    const int64_t dim = theta.size(-1);
    const auto draws = theta.reshape({-1, n_draws, dim}).to(torch::kFloat64);  // [items, n, D]
    const auto center = draws.mean(1);
    const double tail = (1.0 - kCentralLevel) / 2.0;
    const auto low = draws.quantile(tail, 1) - center, high = draws.quantile(1.0 - tail, 1) - center;
    const auto off = torch::cat(params).reshape({-1, dim}).to(torch::kFloat64) - center;
    needed[static_cast<size_t>(batch)] = torch::where(off >= 0, off / high, off / low).nan_to_num(0.0);
  });
  // The scale whose central intervals hold kCentralLevel of the truths: that quantile of the items' own.
  const auto all = torch::cat(needed);  // [N, D]
  std::vector<double> scales;
  for (int64_t d = 0; d < all.size(1); ++d) scales.push_back(all.select(1, d).quantile(kCentralLevel).item<double>());
  return PosteriorSpread::from_scales(std::move(scales));
}

}  // namespace bfhpo::inference
