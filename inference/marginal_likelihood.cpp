#include "inference/marginal_likelihood.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bfhpo::inference {

MarginalLikelihood::MarginalLikelihood(const models::ItemResponseModel& model, const ResponseMatrix& data)
    : model_(model) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  answered_one_hot_ = torch::one_hot(data.responses.to(torch::kLong), model.n_categories()).to(torch::kFloat64) *
                      data.mask.to(torch::kFloat64).unsqueeze(-1);
  unanswered_ = 1.0 - data.mask.to(torch::kFloat64);
  grid_ = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  log_trapezoid_ = torch::full({kAbilityGridPoints}, std::log(step), options);
  log_trapezoid_[0] -= std::log(2.0);
  log_trapezoid_[kAbilityGridPoints - 1] -= std::log(2.0);
  log_grid_weight_ = log_trapezoid_ - 0.5 * grid_ * grid_ - 0.5 * std::log(2.0 * M_PI);
  grid_weight_ = log_grid_weight_.exp();
}

torch::Tensor MarginalLikelihood::category_table(const torch::Tensor& params) const {
  const int64_t sets = params.size(0);
  const auto theta = grid_.unsqueeze(0).expand({sets, grid_points()});
  return models::category_probabilities(model_, theta, params.to(torch::kFloat64).unsqueeze(1)).squeeze(2);
}

torch::Tensor MarginalLikelihood::log_table(const torch::Tensor& params) const {
  const int64_t sets = params.size(0);
  const auto theta = grid_.unsqueeze(0).expand({sets, grid_points()});
  const auto log_p =
      models::category_probabilities(model_, theta, params.to(torch::kFloat64)).clamp_min(1e-300).log();  // [S, G, J, K]
  // Every item and category in one product, [P, J K] x [S, J K, G]: one pass over the [S, P, G] table.
  return torch::matmul(answered_one_hot_.reshape({persons(), -1}),
                       log_p.reshape({sets, grid_points(), -1}).transpose(1, 2));
}

torch::Tensor MarginalLikelihood::differentiable_log_likelihood(const torch::Tensor& params) const {
  return torch::logsumexp(log_table(params) + log_grid_weight_, 2).sum(1);
}

torch::Tensor MarginalLikelihood::log_likelihood(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = params.size(0);
  const int64_t per_chunk = std::max<int64_t>(1, kGridTableElements / std::max<int64_t>(1, persons() * grid_points()));
  std::vector<torch::Tensor> parts;
  for (int64_t start = 0; start < sets; start += per_chunk) {
    const auto chunk = params.narrow(0, start, std::min(per_chunk, sets - start));
    parts.push_back(differentiable_log_likelihood(chunk));
  }
  return torch::cat(parts);
}

MarginalLikelihood::PersonGridTable MarginalLikelihood::table(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const auto log_values = log_table(params);
  const auto log_scale = std::get<0>(log_values.max(2));
  const auto scaled = (log_values - log_scale.unsqueeze(2)).exp();
  return {scaled, log_scale, torch::matmul(scaled, grid_weight_)};
}

torch::Tensor MarginalLikelihood::ability_posterior(const torch::Tensor& params) const {
  const auto fresh = table(params);
  return fresh.scaled * grid_weight_ / fresh.marginal.unsqueeze(2);
}

torch::Tensor MarginalLikelihood::log_likelihood(const PersonGridTable& table) {
  return (table.marginal.log() + table.log_scale).sum(1);
}

MarginalLikelihood::ItemChange MarginalLikelihood::propose(const PersonGridTable& table, int64_t item,
                                                           const torch::Tensor& from, const torch::Tensor& to) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = from.size(0);
  const auto p = category_table(torch::cat({from, to})).transpose(1, 2);  // [2S, K, G]
  ItemChange change;
  change.item = item;
  change.category_ratio = p.narrow(0, sets, sets) / p.narrow(0, 0, sets).clamp_min(1e-300);
  // Person p's new integral: sum_g scaled[p, g] w_g ratio[y_pj, g]; unchanged where p left the item out.
  const auto weighted_ratio = (change.category_ratio * grid_weight_).transpose(1, 2);  // [S, G, K]
  // A table of one set against S changes (an item's draws judged alone): one [P, G] x [G, S K] product.
  const auto by_category =
      table.scaled.size(0) == 1 && sets > 1
          ? torch::matmul(table.scaled[0], weighted_ratio.permute({1, 0, 2}).reshape({grid_points(), -1}))
                .reshape({persons(), sets, -1})
                .transpose(0, 1)
          : torch::matmul(table.scaled, weighted_ratio);  // [S, P, K]
  const auto one_hot = answered_one_hot_.select(1, item);                                                         // [P, K]
  change.marginal = (by_category * one_hot).sum(2) + table.marginal * unanswered_.select(1, item);
  change.log_likelihood = (change.marginal.log() + table.log_scale).sum(1);
  return change;
}

void MarginalLikelihood::apply(PersonGridTable& table, const ItemChange& change, int64_t s) const {
  torch::NoGradGuard no_grad;
  const auto one_hot = answered_one_hot_.select(1, change.item);                   // [P, K]
  const auto ratio = torch::matmul(one_hot, change.category_ratio[s] - 1.0) + 1.0;  // [P, G]; 1 where left out
  table.scaled[s].mul_(ratio);
  table.marginal[s].copy_(change.marginal[s]);
}

torch::Tensor MarginalLikelihood::rescaled_log_likelihood(const PersonGridTable& table, const torch::Tensor& location,
                                                          const torch::Tensor& log_scale) const {
  torch::NoGradGuard no_grad;
  const auto scale = log_scale.reshape({-1, 1});
  const auto moved = grid_ * scale.exp() + location.reshape({-1, 1});                               // [S, G]
  const auto weight = (log_trapezoid_ + scale - 0.5 * moved * moved - 0.5 * std::log(2.0 * M_PI)).exp();
  const auto marginal = torch::matmul(table.scaled, weight.unsqueeze(-1)).squeeze(-1);                // [S, P]
  return (marginal.log() + table.log_scale).sum(1);
}

void MarginalLikelihood::reset(PersonGridTable& table, int64_t s, const torch::Tensor& params) const {
  const auto fresh = this->table(params.unsqueeze(0));
  table.scaled[s].copy_(fresh.scaled[0]);
  table.log_scale[s].copy_(fresh.log_scale[0]);
  table.marginal[s].copy_(fresh.marginal[0]);
}

}  // namespace bfhpo::inference
