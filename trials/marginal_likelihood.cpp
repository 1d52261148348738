#include "trials/marginal_likelihood.hpp"

#include "trials/posterior_predictive_check.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bfhpo::trials {
namespace {

constexpr double kAbilityLimit = 6.0;
// Doubles one chunk's [S, P, G] table holds at most (64 MB).
constexpr int64_t kTableElements = int64_t{8} << 20;

}  // namespace

MarginalLikelihood::MarginalLikelihood(const models::ItemResponseModel& model, const ResponseMatrix& data)
    : model_(model) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  answered_one_hot_ = torch::one_hot(data.responses.to(torch::kLong), model.n_categories()).to(torch::kFloat64) *
                      data.mask.to(torch::kFloat64).unsqueeze(-1);
  grid_ = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  auto weight = torch::full({kAbilityGridPoints}, std::log(step), options) - 0.5 * grid_ * grid_ -
                0.5 * std::log(2.0 * M_PI);
  weight[0] -= std::log(2.0);
  weight[kAbilityGridPoints - 1] -= std::log(2.0);
  log_grid_weight_ = weight;
  grid_weight_ = weight.exp();
}

torch::Tensor MarginalLikelihood::category_table(const torch::Tensor& params) const {
  const int64_t sets = params.size(0);
  const auto theta = grid_.unsqueeze(0).expand({sets, grid_points()});
  return models::category_probabilities(model_, theta, params.to(torch::kFloat64).unsqueeze(1)).squeeze(2);
}

torch::Tensor MarginalLikelihood::item_log_table(int64_t item, const torch::Tensor& params) const {
  const auto log_p = category_table(params).clamp_min(1e-300).log();                // [S, G, K]
  return torch::matmul(answered_one_hot_.select(1, item), log_p.transpose(1, 2));  // [P, K] x [S, K, G]
}

torch::Tensor MarginalLikelihood::log_table(const torch::Tensor& params) const {
  auto table = item_log_table(0, params.select(1, 0));
  for (int64_t j = 1; j < items(); ++j) table += item_log_table(j, params.select(1, j));
  return table;
}

torch::Tensor MarginalLikelihood::log_likelihood(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = params.size(0);
  const int64_t per_chunk = std::max<int64_t>(1, kTableElements / std::max<int64_t>(1, persons() * grid_points()));
  std::vector<torch::Tensor> parts;
  for (int64_t start = 0; start < sets; start += per_chunk) {
    const auto chunk = params.narrow(0, start, std::min(per_chunk, sets - start));
    parts.push_back(torch::logsumexp(log_table(chunk) + log_grid_weight_, 2).sum(1));
  }
  return torch::cat(parts);
}

MarginalLikelihood::PersonGridTable MarginalLikelihood::table(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const auto log_values = log_table(params);
  const auto log_scale = std::get<0>(log_values.max(2));
  return {(log_values - log_scale.unsqueeze(2)).exp(), log_scale};
}

torch::Tensor MarginalLikelihood::log_likelihood(const PersonGridTable& table) const {
  return log_likelihood(table.scaled, table.log_scale);
}

torch::Tensor MarginalLikelihood::log_likelihood(const torch::Tensor& scaled, const torch::Tensor& log_scale) const {
  return (torch::matmul(scaled, grid_weight_).log() + log_scale).sum(1);
}

torch::Tensor MarginalLikelihood::item_ratio(int64_t item, const torch::Tensor& from, const torch::Tensor& to) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = from.size(0);
  const auto p = category_table(torch::cat({from, to}));  // [2S, G, K]
  const auto ratio_minus_one = p.narrow(0, sets, sets) / p.narrow(0, 0, sets).clamp_min(1e-300) - 1.0;
  // One-hot rows pick the answered category's ratio; a left-out cell's zero row leaves 1.
  return torch::matmul(answered_one_hot_.select(1, item), ratio_minus_one.transpose(1, 2)) + 1.0;
}

}  // namespace bfhpo::trials
