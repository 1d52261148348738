#include "inference/summary_space_check.hpp"

#include "common/json_number.hpp"
#include "models/simulators/seed_mix.hpp"
#include "models/simulators/simulator.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <vector>

namespace bfhpo::inference {
namespace {

constexpr double kBandwidthScales[] = {0.25, 0.5, 1.0, 2.0, 4.0};
constexpr double kUncomputed = std::numeric_limits<double>::quiet_NaN();

// The multi-scale kernel between the rows of a [N, S] and b [M, S]: [N, M], float64.
torch::Tensor kernel(const torch::Tensor& a, const torch::Tensor& b, double bandwidth) {
  const auto squared = torch::cdist(a, b).pow(2);
  auto sum = torch::zeros_like(squared);
  for (double scale : kBandwidthScales) sum += torch::exp(-squared / (2.0 * std::pow(scale * bandwidth, 2)));
  return sum;
}

// The median distance between distinct rows of `reference`; 1 when they all coincide.
double median_distance(const torch::Tensor& reference) {
  const int64_t m = reference.size(0);
  const auto upper = torch::triu_indices(m, m, 1);
  const auto distances = torch::cdist(reference, reference).index({upper[0], upper[1]});
  const double median = distances.median().item<double>();
  return median > 0.0 ? median : 1.0;
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

}  // namespace

double mmd2_to_reference(const torch::Tensor& x, const torch::Tensor& reference, double bandwidth) {
  const auto point = x.to(torch::kFloat64).reshape({1, -1});
  const auto ref = reference.to(torch::kFloat64);
  return (kernel(point, point, bandwidth).mean() - 2.0 * kernel(point, ref, bandwidth).mean() +
          kernel(ref, ref, bandwidth).mean())
      .item<double>();
}

namespace {

// Cells of the simulated sets the summary network reads at once: a batch of them costs about what one set
// does in the network's per-operation overhead (400 sets of 300 x 5 one at a time were 62% of a whole
// `infer`), and its activations stay near 70 MB (64 hidden floats a cell, a few layers).
constexpr int64_t kReferenceBatchCells = int64_t{1} << 16;

SummarySpaceReference simulate_reference(TrainedModel& model, int64_t persons, int64_t items, double missing_share,
                                         uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto& summary = model.approximator->summary_network();
  models::SimulatorSpec spec = model.config.simulator;
  spec.missing = {missing_share, missing_share};
  const models::Simulator simulator(spec, models::mix_seed(seed, 0x4D4D44ULL), torch::kCPU);
  const int64_t sets = kReferenceSets + kHeldOutSets;
  const int64_t per_batch = std::max<int64_t>(1, kReferenceBatchCells / std::max<int64_t>(1, persons * items));
  const int64_t batches = (sets + per_batch - 1) / per_batch;
  std::vector<torch::Tensor> parts(static_cast<size_t>(batches));
  // The batches on the cores side by side (each set simulated alone from its own seed, summarized with the
  // others of its batch): the same values on any number of cores.
  trials::for_each_on_workers(batches, [&](int64_t batch) {
    std::vector<torch::Tensor> responses, masks;
    for (int64_t set = batch * per_batch; set < std::min(sets, (batch + 1) * per_batch); ++set) {
      const auto simulated = simulator.sample_shape(1, items, persons, static_cast<uint64_t>(set));
      responses.push_back(simulated.responses);
      masks.push_back(simulated.mask);
    }
    parts[static_cast<size_t>(batch)] =
        summary->forward(torch::cat(responses), torch::cat(masks)).global.to(torch::kFloat64);
  });
  const auto simulated = torch::cat(parts);
  SummarySpaceReference out;
  out.reference = simulated.narrow(0, 0, kReferenceSets);
  const auto held_out = simulated.narrow(0, kReferenceSets, kHeldOutSets);
  out.bandwidth = median_distance(out.reference);
  out.null_mmd2.resize(static_cast<size_t>(kHeldOutSets));
  trials::for_each_on_workers(kHeldOutSets, [&](int64_t h) {
    out.null_mmd2[static_cast<size_t>(h)] = mmd2_to_reference(held_out[h], out.reference, out.bandwidth);
  });
  std::sort(out.null_mmd2.begin(), out.null_mmd2.end());
  return out;
}

}  // namespace

SummarySpaceCheck summary_space_check(TrainedModel& model, const ResponseMatrix& data, uint64_t seed,
                                      SummarySpaceReferences* references, const torch::Tensor& observed_summary) {
  torch::NoGradGuard no_grad;
  const int64_t persons = data.responses.size(0), items = data.responses.size(1);
  SummarySpaceCheck check;
  check.reference_sets = kReferenceSets;
  check.held_out_sets = kHeldOutSets;
  check.missing_share = 1.0 - data.mask.mean().item<double>();
  if (data.mask.sum().item<double>() == 0.0) {
    check.mmd2 = check.held_out_median = check.percentile = check.p_value = kUncomputed;
    check.skipped = "every cell of the data is missing, and data sets with no observed cell cannot be simulated";
    return check;
  }
  SummarySpaceReferences once;
  const auto reference = (references ? *references : once).get({persons, items, check.missing_share, seed}, [&] {
    return simulate_reference(model, persons, items, check.missing_share, seed);
  });
  const SummarySpaceReference& simulated = *reference;
  const auto observed =
      observed_summary.defined()
          ? observed_summary
          : model.approximator->summarize(data.responses.unsqueeze(0), data.mask.unsqueeze(0)).global[0];
  check.mmd2 = mmd2_to_reference(observed, simulated.reference, simulated.bandwidth);
  const auto& null_mmd2 = simulated.null_mmd2;
  const auto first_at_least = std::lower_bound(null_mmd2.begin(), null_mmd2.end(), check.mmd2);
  const auto below = static_cast<int64_t>(first_at_least - null_mmd2.begin());
  const int64_t at_least = kHeldOutSets - below;
  check.held_out_median = 0.5 * (null_mmd2[(kHeldOutSets - 1) / 2] + null_mmd2[kHeldOutSets / 2]);
  check.percentile = 100.0 * static_cast<double>(below) / static_cast<double>(kHeldOutSets);
  check.p_value = static_cast<double>(1 + at_least) / static_cast<double>(kHeldOutSets + 1);
  return check;
}

nlohmann::json SummarySpaceCheck::to_json() const {
  nlohmann::json out = {{"mmd2", number_or_null(mmd2)},
                        {"held_out_median_mmd2", number_or_null(held_out_median)},
                        {"percentile", number_or_null(percentile)},
                        {"p_value", number_or_null(p_value)},
                        {"reference_sets", reference_sets},
                        {"held_out_sets", held_out_sets},
                        {"missing_share", missing_share},
                        {"outside", outside()}};
  if (!skipped.empty()) out["skipped"] = skipped;
  return out;
}

std::optional<std::string> SummarySpaceCheck::warning() const {
  if (!skipped.empty()) return "model check: the summary-space check is left out: " + skipped;
  if (!outside()) return std::nullopt;
  return "model check: the data's summary lies farther from the simulated data sets' summaries than " +
         fixed(percentile, 1) + "% of simulated sets do (MMD^2 " + fixed(mmd2, 4) + ", simulated median " +
         fixed(held_out_median, 4) + ", p = " + fixed(p_value, 4) +
         "): the data lie outside what the network was trained on; its posterior may be confidently wrong";
}

}  // namespace bfhpo::inference
