#include "inference/posterior_spread.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::inference {

using nlohmann::json;

namespace {

// The z sd a calibrated posterior shows when z is computed from n draws
// (posterior_spread.hpp): sqrt((1 + 1/n)(n - 1)/(n - 3)).
double z_sd_of_calibrated(double n) { return std::sqrt((1.0 + 1.0 / n) * (n - 1.0) / (n - 3.0)); }

}  // namespace

PosteriorSpread PosteriorSpread::from_diagnostics(const json& diagnostics,
                                                  const std::vector<std::string>& parameter_names) {
  constexpr double kFewestDraws = 4.0;
  if (!diagnostics.is_object() || !diagnostics.contains("parameters") || !diagnostics["parameters"].is_array())
    return {};
  const json n_json = diagnostics.value("n_draws", json());
  if (!n_json.is_number() || n_json.get<double>() < kFewestDraws) return {};
  const double calibrated = z_sd_of_calibrated(n_json.get<double>());
  std::vector<double> scales;
  for (const auto& name : parameter_names) {
    double scale = NAN;
    for (const auto& parameter : diagnostics["parameters"])
      if (parameter.is_object() && parameter.value("name", "") == name && parameter.contains("z_std") &&
          parameter["z_std"].is_number())
        scale = parameter["z_std"].get<double>() / calibrated;
    if (!std::isfinite(scale) || scale <= 0.0) return {};
    scales.push_back(std::abs(scale - 1.0) <= kSpreadResolution ? 1.0 : scale);
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
