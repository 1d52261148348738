// Gaussian toy model with a closed-form posterior (tests only), for exact tests of the
// whole stack: mu ~ N(0, prior_std^2 I_2), x_i ~ N(mu, noise_std^2 I_2) for
// i = 1..N, N drawn per batch from [min_obs, max_obs]. The posterior of mu is
// N(m, s^2 I_2) with 1/s^2 = 1/prior_std^2 + N/noise_std^2 and
// m = s^2 * sum_i x_i / noise_std^2. Seeded like models::Simulator.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace bfhpo::models {

struct GaussianToyConfig {
  double prior_std = 1.0;
  double noise_std = 1.0;
  int64_t min_obs = 5;
  int64_t max_obs = 20;
};

struct GaussianToyBatch {
  torch::Tensor observations;  // [B, N, 2]
  torch::Tensor params;        // [B, 2] true mu
};

struct GaussianPosterior {
  torch::Tensor mean;  // [B, 2]
  torch::Tensor std;   // [B, 2]
};

class GaussianToy {
 public:
  GaussianToy(GaussianToyConfig config, uint64_t seed, torch::Device device);

  GaussianToyBatch sample(int64_t batch_size, uint64_t batch_index) const;
  GaussianToyBatch sample_shape(int64_t batch_size, int64_t n_obs,
                                uint64_t batch_index) const;
  GaussianPosterior posterior(const torch::Tensor& observations) const;

  static constexpr int64_t param_dim = 2;

 private:
  GaussianToyConfig config_;
  uint64_t seed_;
  torch::Device device_;
};

}  // namespace bfhpo::models
