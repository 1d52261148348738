#include "models/networks/coupling_flow.hpp"

#include "models/simulators/seed_mix.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bfhpo::models {
namespace {

constexpr double kLogTwoPi = 1.8378770664093454836;

}  // namespace

CouplingFlowImpl::CouplingFlowImpl(int64_t param_dim, int64_t context_dim, FlowSpec spec, uint64_t seed)
    : param_dim_(param_dim), context_dim_(context_dim), spec_(std::move(spec)) {
  if (param_dim_ < 1) throw std::invalid_argument("CouplingFlow: param_dim must be >= 1, got " + std::to_string(param_dim_));
  if (context_dim_ < 0) throw std::invalid_argument("CouplingFlow: context_dim must be >= 0");
  if (spec_.depth < 1) throw std::invalid_argument("CouplingFlow: depth must be >= 1");
  for (int64_t k = 0; k < spec_.depth; ++k) {
    const std::string id = std::to_string(k);
    actnorms_.push_back(register_module("actnorm" + id, ActNorm(param_dim_)));
    auto gen = torch::make_generator<torch::CPUGeneratorImpl>(mix_seed(seed, static_cast<uint64_t>(k)));
    auto perm = torch::randperm(param_dim_, gen, torch::TensorOptions().dtype(torch::kLong));
    permutations_.push_back(register_buffer("permutation" + id, perm));
    inverse_permutations_.push_back(register_buffer("inverse_permutation" + id, torch::argsort(perm)));
    couplings_.push_back(register_module("coupling" + id, DualAffineCoupling(param_dim_, context_dim_, spec_)));
  }
}

// Module::to(dtype) also casts buffers, so the index buffers are cast back to int64 here.
std::pair<torch::Tensor, torch::Tensor> CouplingFlowImpl::forward(const torch::Tensor& theta,
                                                                   const torch::Tensor& context) {
  auto x = theta;
  auto log_det = torch::zeros({theta.size(0)}, theta.options());
  for (size_t k = 0; k < couplings_.size(); ++k) {
    auto [normed, actnorm_log_det] = actnorms_[k]->forward(x);
    auto [coupled, coupling_log_det] =
        couplings_[k]->forward(normed.index_select(1, permutations_[k].to(torch::kLong)), context);
    x = coupled;
    log_det = log_det + actnorm_log_det + coupling_log_det;
  }
  return {x, log_det};
}

std::pair<torch::Tensor, torch::Tensor> CouplingFlowImpl::inverse(const torch::Tensor& z,
                                                                   const torch::Tensor& context) {
  return inverse_grouped(z, context, 1);
}

std::pair<torch::Tensor, torch::Tensor> CouplingFlowImpl::inverse_grouped(const torch::Tensor& z,
                                                                           const torch::Tensor& context,
                                                                           int64_t group) {
  auto x = z;
  auto log_det = torch::zeros({z.size(0)}, z.options());
  for (size_t k = couplings_.size(); k-- > 0;) {
    auto [coupled, coupling_log_det] = couplings_[k]->inverse(x, context, group);
    auto [normed, actnorm_log_det] = actnorms_[k]->inverse(coupled.index_select(1, inverse_permutations_[k].to(torch::kLong)));
    x = normed;
    log_det = log_det + coupling_log_det + actnorm_log_det;
  }
  return {x, log_det};
}

torch::Tensor CouplingFlowImpl::base_log_prob(const torch::Tensor& z) const {
  return -0.5 * z.pow(2).sum(1) - 0.5 * static_cast<double>(param_dim_) * kLogTwoPi;
}

torch::Tensor CouplingFlowImpl::log_prob(const torch::Tensor& theta, const torch::Tensor& context) {
  auto [z, log_det] = forward(theta, context);
  return base_log_prob(z) + log_det;
}

std::pair<torch::Tensor, torch::Tensor> CouplingFlowImpl::sample(int64_t n, const torch::Tensor& context,
                                                                 c10::optional<at::Generator> generator) {
  const int64_t rows = context.size(0);
  auto z = torch::randn({rows * n, param_dim_}, std::move(generator), context.options());
  auto [theta, log_det] = inverse_grouped(z, context, n);
  return {theta.reshape({rows, n, param_dim_}), (base_log_prob(z) - log_det).reshape({rows, n})};
}

bool CouplingFlowImpl::initialized() const {
  return std::all_of(actnorms_.begin(), actnorms_.end(), [](const ActNorm& actnorm) { return actnorm->initialized(); });
}

}  // namespace bfhpo::models
