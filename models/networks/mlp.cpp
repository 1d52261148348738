#include "models/networks/mlp.hpp"

#include <stdexcept>
#include <utility>

namespace bfhpo::models {
namespace {

torch::Tensor activate(Activation a, const torch::Tensor& x) {
  switch (a) {
    case Activation::relu: return torch::relu(x);
    case Activation::silu: return torch::silu(x);
    case Activation::gelu: return torch::gelu(x);
  }
  throw std::logic_error("unknown activation");
}

}  // namespace

MlpImpl::MlpImpl(MlpOptions options) : options_(std::move(options)) {
  if (options_.widths.empty()) throw std::invalid_argument("Mlp: widths must not be empty");
  int64_t in = options_.in_dim;
  for (size_t i = 0; i < options_.widths.size(); ++i) {
    layers_.push_back(register_module("linear" + std::to_string(i),
                                      torch::nn::Linear(in, options_.widths[i])));
    in = options_.widths[i];
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(options_.dropout));
}

torch::Tensor MlpImpl::forward(torch::Tensor x) { return layers_.back()(hidden(std::move(x))); }

torch::Tensor MlpImpl::hidden(torch::Tensor x) { return hidden_from(0, std::move(x)); }

torch::Tensor MlpImpl::activate_layer(const torch::Tensor& pre_activation) {
  return dropout_(activate(options_.activation, pre_activation));
}

torch::Tensor MlpImpl::hidden_from(size_t first, torch::Tensor x) {
  for (size_t i = first; i + 1 < layers_.size(); ++i) {
    auto h = activate_layer(layers_[i](x));
    x = (options_.residual && h.size(-1) == x.size(-1)) ? x + h : h;
  }
  return x;
}

torch::Tensor MlpImpl::forward_shared(const torch::Tensor& x, const torch::Tensor& shared, int64_t group) {
  if (options_.residual) throw std::logic_error("Mlp::forward_shared: not for a residual Mlp");
  if (group < 1 || x.size(0) != shared.size(0) * group || x.size(1) + shared.size(1) != options_.in_dim)
    throw std::invalid_argument("Mlp::forward_shared: x must be [G * group, a] and shared [G, in_dim - a]");
  const auto& first = layers_.front();
  const int64_t own = x.size(1);
  const auto shared_part = torch::linear(shared, first->weight.narrow(1, own, shared.size(1)), first->bias);
  const auto pre = (torch::linear(x, first->weight.narrow(1, 0, own)).view({shared.size(0), group, -1}) +
                    shared_part.unsqueeze(1))
                       .view({x.size(0), -1});
  if (layers_.size() == 1) return pre;
  return layers_.back()(hidden_from(1, activate_layer(pre)));
}

RunningStandardizationImpl::RunningStandardizationImpl(int64_t dim, double epsilon)
    : epsilon_(epsilon) {
  count_ = register_buffer("count", torch::zeros({}, torch::kFloat64));
  mean_ = register_buffer("mean", torch::zeros({dim}));
  m2_ = register_buffer("m2", torch::zeros({dim}));
}

torch::Tensor RunningStandardizationImpl::forward(torch::Tensor x) {
  if (is_training()) {
    torch::NoGradGuard no_grad;
    auto rows = x.detach().reshape({-1, x.size(-1)}).to(mean_.dtype());
    const double n_b = static_cast<double>(rows.size(0));
    const double n_a = count_.item<double>();
    auto batch_mean = rows.mean(0);
    auto batch_m2 = (rows - batch_mean).pow(2).sum(0);
    auto delta = batch_mean - mean_;
    const double n = n_a + n_b;
    // Chan et al.'s parallel Welford update.
    mean_.add_(delta * (n_b / n));
    m2_.add_(batch_m2 + delta.pow(2) * (n_a * n_b / n));
    count_.fill_(n);
  }
  return (x - mean_) / std();
}

torch::Tensor RunningStandardizationImpl::inverse(const torch::Tensor& z) const {
  return z * std() + mean_;
}

torch::Tensor RunningStandardizationImpl::std() const {
  const double n = count_.item<double>();
  if (n < 2) return torch::ones_like(mean_);
  return (m2_ / (n - 1)).sqrt().clamp_min(epsilon_);
}

torch::Tensor RunningStandardizationImpl::log_det_jacobian() const {
  return -std().log().sum();
}

}  // namespace bfhpo::models
