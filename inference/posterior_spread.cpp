#include "inference/posterior_spread.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::inference {

using nlohmann::json;

PosteriorSpread PosteriorSpread::from_scales(std::vector<double> scales) {
  for (double& scale : scales) {
    if (!std::isfinite(scale) || scale <= 0.0) return {};
    if (std::abs(scale - 1.0) <= kSpreadResolution) scale = 1.0;
  }
  if (std::all_of(scales.begin(), scales.end(), [](double s) { return s == 1.0; })) return {};
  return PosteriorSpread(std::move(scales));
}

json PosteriorSpread::to_json(const std::vector<std::string>& parameter_names) const {
  if (is_identity()) return nullptr;
  json out = json::object();
  for (size_t d = 0; d < scales_.size() && d < parameter_names.size(); ++d) out[parameter_names[d]] = scales_[d];
  return out;
}

torch::Tensor PosteriorSpread::scale_tensor(const torch::Tensor& like) const {
  return torch::tensor(scales_, torch::kFloat64).to(like.scalar_type());
}

torch::Tensor PosteriorSpread::apply(const torch::Tensor& draws, const torch::Tensor& center) const {
  if (is_identity()) return draws;
  const auto c = center.unsqueeze(1);
  return c + (draws - c) * scale_tensor(draws);
}

torch::Tensor PosteriorSpread::invert(const torch::Tensor& draws, const torch::Tensor& center) const {
  if (is_identity()) return draws;
  const auto c = center.unsqueeze(1);
  return c + (draws - c) / scale_tensor(draws);
}

double PosteriorSpread::log_scale_sum() const {
  double sum = 0.0;
  for (double s : scales_) sum += std::log(s);
  return sum;
}

}  // namespace bfhpo::inference
