#include "models/networks/actnorm.hpp"

namespace bfhpo::models {
namespace {

constexpr double kStdFloor = 1e-6;

}  // namespace

ActNormImpl::ActNormImpl(int64_t dim) {
  log_scale_ = register_parameter("log_scale", torch::zeros({dim}));
  shift_ = register_parameter("shift", torch::zeros({dim}));
  initialized_ = register_buffer("initialized", torch::zeros({}));
}

void ActNormImpl::initialize_from(const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  auto rows = x.detach();
  auto mean = rows.mean(0);
  auto std = (rows - mean).pow(2).mean(0).sqrt() + kStdFloor;
  log_scale_.copy_(-std.log());
  shift_.copy_(-mean / std);
  initialized_.fill_(1);
}

std::pair<torch::Tensor, torch::Tensor> ActNormImpl::forward(const torch::Tensor& x) {
  if (is_training() && x.size(0) >= 2 && initialized_.item<double>() == 0) initialize_from(x);
  return {x * log_scale_.exp() + shift_, log_scale_.sum()};
}

std::pair<torch::Tensor, torch::Tensor> ActNormImpl::inverse(const torch::Tensor& y) {
  return {(y - shift_) * (-log_scale_).exp(), -log_scale_.sum()};
}

}  // namespace bfhpo::models
