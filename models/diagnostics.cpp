#include "models/diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace bfhpo::models {
namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("diagnostics: " + message);
}

torch::Tensor as_draws(const torch::Tensor& draws) {
  require(draws.dim() == 3, "draws must be [N, S, D]");
  require(draws.size(0) >= 2 && draws.size(1) >= 2, "draws need N >= 2 datasets and S >= 2 draws");
  return draws.detach().to(torch::kFloat64);
}

torch::Tensor as_truths(const torch::Tensor& truths, const torch::Tensor& draws) {
  require(truths.dim() == 2 && truths.size(0) == draws.size(0) && truths.size(1) == draws.size(2),
          "truths must be [N, D] matching draws [N, S, D]");
  return truths.detach().to(draws.device(), torch::kFloat64);
}

// Unbiased variance along `dim`, written out because Tensor::var's overloads
// differ between libtorch 1.13 and 2.x.
torch::Tensor sample_variance(const torch::Tensor& x, int64_t dim) {
  return (x - x.mean(dim, true)).pow(2).sum(dim) / static_cast<double>(x.size(dim) - 1);
}

// numpy.median along dim 0: the mean of the two middle values when even.
torch::Tensor median_over_first(const torch::Tensor& x) {
  auto sorted = std::get<0>(x.sort(0));
  const int64_t n = x.size(0);
  if (n % 2 == 1) return sorted.select(0, n / 2);
  return (sorted.select(0, n / 2 - 1) + sorted.select(0, n / 2)) / 2.0;
}

// numpy.quantile (linear interpolation) at q of draws already sorted along dim 1.
torch::Tensor sorted_quantile(const torch::Tensor& sorted, double q) {
  const int64_t s = sorted.size(1);
  const double position = q * static_cast<double>(s - 1);
  const auto below = std::min(static_cast<int64_t>(position), s - 1);
  const auto above = std::min(below + 1, s - 1);
  const auto low = sorted.select(1, below);
  return low + (sorted.select(1, above) - low) * (position - static_cast<double>(below));
}

std::vector<double> to_vector(const torch::Tensor& x) {
  auto cpu = x.to(torch::kCPU, torch::kFloat64).contiguous();
  return {cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel()};
}

}  // namespace

torch::Tensor sbc_ranks(const torch::Tensor& draws, const torch::Tensor& truths) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto t = as_truths(truths, x);
  return (x < t.unsqueeze(1)).to(torch::kFloat64).mean(1);
}

torch::Tensor rank_ks_distance(const torch::Tensor& ranks) {
  torch::NoGradGuard no_grad;
  require(ranks.dim() == 2 && ranks.size(0) >= 1, "ranks must be [N, D] with N >= 1");
  auto sorted = std::get<0>(ranks.detach().to(torch::kFloat64).sort(0));
  const auto n = static_cast<double>(ranks.size(0));
  auto steps = torch::arange(1, ranks.size(0) + 1, sorted.options()).unsqueeze(1) / n;
  auto above = (steps - sorted).amax(0);
  auto below = (sorted - (steps - 1.0 / n)).amax(0);
  return torch::max(above, below);
}

torch::Tensor calibration_levels(int64_t resolution, double min_level, double max_level) {
  require(resolution >= 1, "calibration resolution must be >= 1");
  require(0.0 < min_level && min_level <= max_level && max_level < 1.0,
          "calibration levels must satisfy 0 < min_level <= max_level < 1");
  if (resolution == 1) return torch::full({1}, min_level, torch::kFloat64);
  return torch::linspace(min_level, max_level, resolution, torch::kFloat64);
}

torch::Tensor central_interval_coverage(const torch::Tensor& draws, const torch::Tensor& truths,
                                        const torch::Tensor& levels) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto t = as_truths(truths, x);
  require(levels.dim() == 1 && levels.numel() >= 1, "levels must be a non-empty [L] tensor");
  auto sorted = std::get<0>(x.sort(1));
  std::vector<torch::Tensor> coverage;
  for (double level : to_vector(levels)) {
    require(0.0 < level && level < 1.0, "levels must lie in (0, 1)");
    auto lower = sorted_quantile(sorted, (1.0 - level) / 2.0);
    auto upper = sorted_quantile(sorted, (1.0 + level) / 2.0);
    coverage.push_back(((lower <= t) & (t <= upper)).to(torch::kFloat64).mean(0));
  }
  return torch::stack(coverage);
}

torch::Tensor calibration_error(const torch::Tensor& draws, const torch::Tensor& truths,
                                const torch::Tensor& levels) {
  torch::NoGradGuard no_grad;
  auto coverage = central_interval_coverage(draws, truths, levels);
  auto nominal = levels.detach().to(coverage.device(), torch::kFloat64).unsqueeze(1);
  return median_over_first((coverage - nominal).abs());
}

torch::Tensor posterior_mean_correlation(const torch::Tensor& draws, const torch::Tensor& truths) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto dm = x.mean(1);
  dm = dm - dm.mean(0, true);
  auto dt = as_truths(truths, x);
  dt = dt - dt.mean(0, true);
  return (dm * dt).sum(0) / (dm.pow(2).sum(0) * dt.pow(2).sum(0)).sqrt();
}

torch::Tensor normalized_rmse(const torch::Tensor& draws, const torch::Tensor& truths) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto t = as_truths(truths, x);
  auto rmse = (x.mean(1) - t).pow(2).mean(0).sqrt();
  return rmse / (t.amax(0) - t.amin(0));
}

torch::Tensor posterior_contraction(const torch::Tensor& draws,
                                    const torch::Tensor& prior_variance) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  require(prior_variance.dim() == 1 && prior_variance.size(0) == x.size(2),
          "prior_variance must be [D] matching draws [N, S, D]");
  auto prior = prior_variance.detach().to(x.device(), torch::kFloat64);
  return (1.0 - sample_variance(x, 1) / prior).mean(0);
}

torch::Tensor posterior_z_scores(const torch::Tensor& draws, const torch::Tensor& truths) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto t = as_truths(truths, x);
  return (x.mean(1) - t) / sample_variance(x, 1).sqrt();
}

Diagnostics compute_diagnostics(const torch::Tensor& draws, const torch::Tensor& truths,
                                const torch::Tensor& prior_variance,
                                const std::vector<std::string>& names,
                                const DiagnosticsOptions& options) {
  require(draws.dim() == 3 && static_cast<int64_t>(names.size()) == draws.size(2),
          "one parameter name per dimension of draws [N, S, D]");
  auto levels = calibration_levels(options.calibration_resolution, options.min_level,
                                   options.max_level);
  auto z = posterior_z_scores(draws, truths);
  const auto calibration = to_vector(calibration_error(draws, truths, levels));
  const auto rank_ks = to_vector(rank_ks_distance(sbc_ranks(draws, truths)));
  const auto correlation = to_vector(posterior_mean_correlation(draws, truths));
  const auto nrmse = to_vector(normalized_rmse(draws, truths));
  const auto contraction = to_vector(posterior_contraction(draws, prior_variance));
  const auto z_mean = to_vector(z.mean(0));
  const auto z_std = to_vector(sample_variance(z, 0).sqrt());

  Diagnostics result;
  result.n_datasets = draws.size(0);
  result.n_draws = draws.size(1);
  for (size_t d = 0; d < names.size(); ++d)
    result.parameters.push_back({names[d], calibration[d], rank_ks[d], correlation[d], nrmse[d],
                                 contraction[d], z_mean[d], z_std[d]});
  return result;
}

PosteriorItems posterior_items(const torch::Tensor& draws, const torch::Tensor& truths,
                               const torch::Tensor& prior_variance, const std::vector<std::string>& names) {
  torch::NoGradGuard no_grad;
  auto x = as_draws(draws);
  auto t = as_truths(truths, x);
  require(static_cast<int64_t>(names.size()) == x.size(2), "one name a dimension");
  const auto mean = x.mean(1);
  const auto std = sample_variance(x, 1).sqrt();
  const auto rank = (x < t.unsqueeze(1)).sum(1);
  const auto prior = to_vector(prior_variance);
  PosteriorItems items;
  items.n_draws = x.size(1);
  for (int64_t d = 0; d < x.size(2); ++d) {
    PosteriorItems::Parameter p;
    p.name = names[static_cast<size_t>(d)];
    p.prior_variance = prior.at(static_cast<size_t>(d));
    p.mean = to_vector(mean.select(1, d));
    p.std = to_vector(std.select(1, d));
    p.truth = to_vector(t.select(1, d));
    const auto counts = rank.select(1, d).to(torch::kCPU, torch::kInt64).contiguous();
    p.rank.assign(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
    items.parameters.push_back(std::move(p));
  }
  return items;
}

nlohmann::json PosteriorItems::to_json() const {
  const auto rounded = [](const std::vector<double>& values) {
    nlohmann::json out = nlohmann::json::array();
    char text[32];
    for (const double v : values) {
      std::snprintf(text, sizeof text, "%.4g", v);
      out.push_back(std::isfinite(v) ? nlohmann::json(std::strtod(text, nullptr)) : nlohmann::json());
    }
    return out;
  };
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : parameters)
    params.push_back({{"name", p.name},
                      {"prior_variance", p.prior_variance},
                      {"mean", rounded(p.mean)},
                      {"std", rounded(p.std)},
                      {"truth", rounded(p.truth)},
                      {"rank", p.rank}});
  return {{"n_draws", n_draws}, {"parameters", params}};
}

nlohmann::json Diagnostics::to_json() const {
  auto params = nlohmann::json::array();
  for (const auto& p : parameters)
    params.push_back({{"name", p.name},
                      {"calibration_error", p.calibration_error},
                      {"rank_ks", p.rank_ks},
                      {"correlation", p.correlation},
                      {"nrmse", p.nrmse},
                      {"contraction", p.contraction},
                      {"z_mean", p.z_mean},
                      {"z_std", p.z_std}});
  return {{"n_datasets", n_datasets}, {"n_draws", n_draws}, {"parameters", params}};
}

std::string Diagnostics::table() const {
  const std::vector<std::string> columns = {"cal_error", "rank_ks", "r",     "nrmse",
                                            "contraction", "z_mean", "z_std"};
  size_t name_width = std::string("parameter").size();
  for (const auto& p : parameters) name_width = std::max(name_width, p.name.size());
  const int width = 12;

  std::ostringstream out;
  out << std::left << std::setw(static_cast<int>(name_width)) << "parameter" << std::right;
  for (const auto& c : columns) out << std::setw(width) << c;
  out << '\n' << std::fixed << std::setprecision(4);
  for (const auto& p : parameters) {
    out << std::left << std::setw(static_cast<int>(name_width)) << p.name << std::right;
    for (double v : {p.calibration_error, p.rank_ks, p.correlation, p.nrmse, p.contraction,
                     p.z_mean, p.z_std})
      out << std::setw(width) << v;
    out << '\n';
  }
  return out.str();
}

}  // namespace bfhpo::models
