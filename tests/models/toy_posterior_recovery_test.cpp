#include <catch2/catch.hpp>

#include "models/diagnostics.hpp"
#include "models/networks/coupling_flow.hpp"
#include "tests/models/gaussian_toy.hpp"

#include <cmath>
#include <vector>

using namespace bfhpo::models;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The sufficient statistics of the toy model as the flow's context: the
// observations' mean and 1 / sqrt(n_obs).
torch::Tensor context_of(const torch::Tensor& observations) {
  const double n = static_cast<double>(observations.size(1));
  auto mean = observations.mean(1);
  return torch::cat({mean, torch::full({mean.size(0), 1}, 1.0 / std::sqrt(n))}, 1);
}

struct ToySet {
  torch::Tensor context;         // [N, 3]
  torch::Tensor truth;           // [N, 2] the simulated mu
  GaussianPosterior posterior;   // analytic, [N, 2] each
};

// `batches` simulated batches of `size`, each with its own n_obs in [5, 20].
ToySet toy_set(const GaussianToy& toy, uint64_t first_batch, int batches, int64_t size) {
  std::vector<torch::Tensor> contexts, truths, means, stds;
  for (int k = 0; k < batches; ++k) {
    auto batch = toy.sample(size, first_batch + static_cast<uint64_t>(k));
    auto posterior = toy.posterior(batch.observations);
    contexts.push_back(context_of(batch.observations));
    truths.push_back(batch.params);
    means.push_back(posterior.mean);
    stds.push_back(posterior.std);
  }
  return {torch::cat(contexts), torch::cat(truths), {torch::cat(means), torch::cat(stds)}};
}

}  // namespace

// "Within 10%", over a validation set of datasets with n_obs from 5 to 20:
//   mean error  mean over datasets and dims of |flow mean - posterior mean| / posterior sd
//   sd error    mean over datasets and dims of |flow sd / posterior sd - 1|
// the flow's mean and sd estimated from 2000 draws (Monte Carlo error about
// 0.02 in each); both <= 0.10. Calibration error (models::compute_diagnostics,
// 20 levels, 1000 datasets, 200 draws each) against the simulated truths
// <= 0.05 for both dims.
TEST_CASE("A short training run of the flow recovers the Gaussian toy posterior", "[flow][recovery]") {
  torch::manual_seed(10);
  GaussianToy toy(GaussianToyConfig{}, 17, torch::kCPU);
  FlowSpec spec;
  spec.depth = 2;
  spec.subnet_width = 32;
  spec.subnet_depth = 2;
  CouplingFlow flow(2, 3, spec, 5);

  const int steps = 400;
  const double peak_lr = 3e-2;
  torch::optim::Adam optimizer(flow->parameters(), torch::optim::AdamOptions(peak_lr));
  uint64_t batch_index = 0;
  for (int step = 0; step < steps; ++step) {
    const double lr = peak_lr * 0.5 * (1.0 + std::cos(kPi * step / steps));  // cosine decay
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    const auto batch = toy_set(toy, batch_index, 4, 64);  // four n_obs per step
    batch_index += 4;
    auto loss = -flow->log_prob(batch.truth, batch.context).mean();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  flow->eval();
  torch::NoGradGuard no_grad;

  const auto recovery = toy_set(toy, 1000000, 20, 10);
  const auto draws = flow->sample(2000, recovery.context).first;  // [N, S, 2]
  const auto& truth = recovery.posterior;
  const double mean_error = ((draws.mean(1) - truth.mean).abs() / truth.std).mean().item<double>();
  const double sd_error = (draws.std(1) / truth.std - 1).abs().mean().item<double>();
  INFO("mean error " << mean_error << " posterior sd, sd error " << sd_error);
  REQUIRE(mean_error <= 0.10);
  REQUIRE(sd_error <= 0.10);

  const auto calibration = toy_set(toy, 2000000, 20, 50);
  const auto diagnostics = compute_diagnostics(flow->sample(200, calibration.context).first, calibration.truth,
                                               torch::tensor({1.0, 1.0}, torch::kFloat64), {"mu1", "mu2"});
  for (const auto& parameter : diagnostics.parameters) {
    INFO(parameter.name << ": calibration error " << parameter.calibration_error);
    REQUIRE(parameter.calibration_error <= 0.05);
  }
}
