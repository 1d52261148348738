#include "models/networks/affine_coupling.hpp"

#include <stdexcept>
#include <string>

namespace bfhpo::models {
namespace {

constexpr double kPi = 3.14159265358979323846;

Mlp make_subnet(int64_t in_dim, int64_t out_dim, const FlowSpec& spec) {
  MlpOptions options;
  options.in_dim = in_dim;
  options.widths.assign(static_cast<size_t>(spec.subnet_depth), spec.subnet_width);
  options.widths.push_back(2 * out_dim);
  options.activation = spec.activation;
  options.dropout = spec.dropout;
  Mlp subnet(options);
  torch::NoGradGuard no_grad;
  const std::string last = "linear" + std::to_string(spec.subnet_depth);
  for (auto& param : subnet->named_parameters())
    if (param.key().rfind(last + ".", 0) == 0) param.value().zero_();
  return subnet;
}

}  // namespace

DualAffineCouplingImpl::DualAffineCouplingImpl(int64_t dim, int64_t context_dim, const FlowSpec& spec)
    : first_half_(dim / 2), clamp_(spec.clamp) {
  if (dim < 1) throw std::invalid_argument("DualAffineCoupling: needs at least 1 dim, got " + std::to_string(dim));
  if (spec.clamp <= 0) throw std::invalid_argument("DualAffineCoupling: clamp must be positive");
  if (spec.subnet_depth < 0 || spec.subnet_width < 1)
    throw std::invalid_argument("DualAffineCoupling: subnet_depth must be >= 0 and subnet_width >= 1");
  const int64_t second_half = dim - first_half_;
  subnet1_ = register_module("subnet1", make_subnet(first_half_ + context_dim, second_half, spec));
  if (first_half_ > 0) subnet2_ = register_module("subnet2", make_subnet(second_half + context_dim, first_half_, spec));
}

std::pair<torch::Tensor, torch::Tensor> DualAffineCouplingImpl::scale_shift(
    Mlp& subnet, const torch::Tensor& conditioner, const torch::Tensor& context, int64_t group) const {
  auto out = (group == 1 ? subnet->forward(torch::cat({conditioner, context}, 1))
                         : subnet->forward_shared(conditioner, context, group))
                 .chunk(2, 1);
  auto log_scale = (clamp_ * 2.0 / kPi) * torch::atan(out[0] / clamp_);
  return {log_scale, out[1]};
}

std::pair<torch::Tensor, torch::Tensor> DualAffineCouplingImpl::forward(const torch::Tensor& x,
                                                                         const torch::Tensor& context) {
  auto x1 = x.narrow(1, 0, first_half_);
  auto x2 = x.narrow(1, first_half_, x.size(1) - first_half_);
  auto [s1, t1] = scale_shift(subnet1_, x1, context);
  auto y2 = x2 * s1.exp() + t1;
  if (first_half_ == 0) return {y2, s1.sum(1)};
  auto [s2, t2] = scale_shift(subnet2_, y2, context);
  auto y1 = x1 * s2.exp() + t2;
  return {torch::cat({y1, y2}, 1), s1.sum(1) + s2.sum(1)};
}

std::pair<torch::Tensor, torch::Tensor> DualAffineCouplingImpl::inverse(const torch::Tensor& y,
                                                                         const torch::Tensor& context,
                                                                         int64_t group) {
  auto y1 = y.narrow(1, 0, first_half_);
  auto y2 = y.narrow(1, first_half_, y.size(1) - first_half_);
  auto x1 = y1;
  auto log_det = torch::zeros({y.size(0)}, y.options());
  if (first_half_ > 0) {
    auto [s2, t2] = scale_shift(subnet2_, y2, context, group);
    x1 = (y1 - t2) * (-s2).exp();
    log_det = log_det - s2.sum(1);
  }
  auto [s1, t1] = scale_shift(subnet1_, x1, context, group);
  auto x2 = (y2 - t1) * (-s1).exp();
  return {torch::cat({x1, x2}, 1), log_det - s1.sum(1)};
}

}  // namespace bfhpo::models
