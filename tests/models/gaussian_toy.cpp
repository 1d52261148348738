#include "tests/models/gaussian_toy.hpp"

#include <random>
#include <stdexcept>

#include "models/simulators/seed_mix.hpp"

namespace bfhpo::models {

GaussianToy::GaussianToy(GaussianToyConfig config, uint64_t seed, torch::Device device)
    : config_(config), seed_(seed), device_(device) {
  if (config_.prior_std <= 0 || config_.noise_std <= 0 || config_.min_obs < 1 ||
      config_.max_obs < config_.min_obs)
    throw std::invalid_argument("GaussianToy: invalid configuration");
}

GaussianToyBatch GaussianToy::sample(int64_t batch_size, uint64_t batch_index) const {
  std::mt19937_64 shape_rng(mix_seed(seed_, batch_index) ^ 0x5DEECE66DULL);
  std::uniform_int_distribution<int64_t> n_obs(config_.min_obs, config_.max_obs);
  return sample_shape(batch_size, n_obs(shape_rng), batch_index);
}

GaussianToyBatch GaussianToy::sample_shape(int64_t batch_size, int64_t n_obs,
                                           uint64_t batch_index) const {
  torch::NoGradGuard no_grad;
  auto gen = torch::make_generator<torch::CPUGeneratorImpl>(mix_seed(seed_, batch_index));
  auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  auto mu = at::normal(0.0, config_.prior_std, {batch_size, 2}, gen, opts);
  auto x = mu.unsqueeze(1) + at::normal(0.0, config_.noise_std, {batch_size, n_obs, 2}, gen, opts);
  return {x.to(device_), mu.to(device_)};
}

GaussianPosterior GaussianToy::posterior(const torch::Tensor& observations) const {
  const double n = static_cast<double>(observations.size(1));
  const double noise_var = config_.noise_std * config_.noise_std;
  const double var = 1.0 / (1.0 / (config_.prior_std * config_.prior_std) + n / noise_var);
  auto mean = observations.sum(1) * (var / noise_var);
  return {mean, torch::full_like(mean, std::sqrt(var))};
}

}  // namespace bfhpo::models
