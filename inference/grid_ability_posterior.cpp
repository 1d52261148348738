#include "inference/grid_ability_posterior.hpp"

#include "inference/ability_grid.hpp"
#include "inference/marginal_likelihood.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bfhpo::inference {

GridAbilityPosterior::GridAbilityPosterior(const models::ItemResponseModel& model, const ResponseMatrix& data)
    : model_(model) {
  const int64_t persons = data.responses.size(0);
  const auto one_hot = (torch::one_hot(data.responses.to(torch::kLong), model.n_categories()).to(torch::kFloat32) *
                        data.mask.to(torch::kFloat32).unsqueeze(-1))
                           .reshape({persons, -1});
  answered_one_hot_ = torch::cat({one_hot, torch::ones({persons, 1})}, 1);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  grid_ = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  auto log_trapezoid = torch::full({kAbilityGridPoints}, std::log(step), options);
  log_trapezoid[0] -= std::log(2.0);
  log_trapezoid[kAbilityGridPoints - 1] -= std::log(2.0);
  log_grid_weight_ = (log_trapezoid - 0.5 * grid_ * grid_).to(torch::kFloat32);
}

std::vector<std::pair<int64_t, int64_t>> grid_chunks(int64_t sets, int64_t persons) {
  const int64_t per_chunk = std::max<int64_t>(1, kGridTableElements / std::max<int64_t>(1, persons * kAbilityGridPoints));
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t start = 0; start < sets; start += per_chunk) chunks.emplace_back(start, std::min(per_chunk, sets - start));
  return chunks;
}

torch::Tensor GridAbilityPosterior::log_joint(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = params.size(0), grid_points = grid_.size(0);
  const auto on_grid = grid_.unsqueeze(0).expand({sets, grid_points});
  const auto log_p = models::category_probabilities(model_, on_grid, params.to(torch::kFloat64))
                         .clamp_min(1e-300)
                         .log()
                         .to(torch::kFloat32);  // [S, G, J, K]
  // The grid's log weights ride in the product as one more "category" every person answered.
  const auto with_weight =
      torch::cat({log_p.reshape({sets, grid_points, -1}), log_grid_weight_.reshape({1, grid_points, 1}).expand({sets, grid_points, 1})}, 2);
  return torch::matmul(answered_one_hot_, with_weight.transpose(1, 2));  // [S, P, G]
}

torch::Tensor GridAbilityPosterior::normalize(const torch::Tensor& log_joint, torch::Tensor& posterior) {
  const auto most = std::get<0>(log_joint.max(2, /*keepdim=*/true));
  torch::sub_out(posterior, log_joint, most).exp_();
  const auto sum = posterior.sum(2, /*keepdim=*/true);
  posterior.div_(sum);
  return (most + sum.log()).squeeze(2);
}

torch::Tensor GridAbilityPosterior::operator()(const torch::Tensor& params) const {
  auto table = log_joint(params);
  normalize(table, table);
  return table;
}

namespace {

// log p(y | params) [S] float64 from each person's log integral [S, P] float32: their sum in float64;
// the grid's log weights leave out N(0, 1)'s constant.
torch::Tensor marginal_from_integrals(const torch::Tensor& log_integral, int64_t persons) {
  return log_integral.to(torch::kFloat64).sum(1) - 0.5 * std::log(2.0 * M_PI) * static_cast<double>(persons);
}

}  // namespace

torch::Tensor GridAbilityPosterior::log_marginal_likelihood(const torch::Tensor& params) const {
  const auto chunks = grid_chunks(params.size(0), persons());
  std::vector<torch::Tensor> parts(chunks.size());
  trials::for_each_on_workers(static_cast<int64_t>(chunks.size()), [&](int64_t chunk) {
    const auto [start, count] = chunks[static_cast<size_t>(chunk)];
    // Each person's integral in float32, their sum in float64.
    parts[static_cast<size_t>(chunk)] =
        marginal_from_integrals(torch::logsumexp(log_joint(params.narrow(0, start, count)), 2), persons());
  });
  return torch::cat(parts);
}

bool DrawAbilityTable::fits(int64_t draws, int64_t persons) {
  return draws * persons * kAbilityGridPoints <= kSharedAbilityTableElements;
}

DrawAbilityTable::DrawAbilityTable(const GridAbilityPosterior& abilities, const torch::Tensor& draws)
    : persons_(abilities.persons()) {
  torch::NoGradGuard no_grad;
  const auto params = draws.transpose(0, 1).to(torch::kFloat64);  // [S, J, D]
  const int64_t sets = params.size(0), grid_points = abilities.grid().size(0);
  posterior_ = torch::empty({sets, persons_, grid_points}, torch::kFloat32);
  log_integral_ = torch::empty({sets, persons_}, torch::kFloat32);
  rows_ = torch::arange(sets, torch::kLong);
  const auto chunks = grid_chunks(sets, persons_);
  trials::for_each_on_workers(static_cast<int64_t>(chunks.size()), [&](int64_t chunk) {
    const auto [start, count] = chunks[static_cast<size_t>(chunk)];
    auto rows = posterior_.narrow(0, start, count);
    log_integral_.narrow(0, start, count).copy_(
        GridAbilityPosterior::normalize(abilities.log_joint(params.narrow(0, start, count)), rows));
  });
}

torch::Tensor DrawAbilityTable::log_marginal_likelihood() const {
  return marginal_from_integrals(log_integral_.index_select(0, rows_), persons_);
}

torch::Tensor DrawAbilityTable::posteriors(const torch::Tensor& indices) const {
  return posterior_.index_select(0, rows_.index_select(0, indices));
}

void DrawAbilityTable::select(const torch::Tensor& rows) { rows_ = rows_.index_select(0, rows); }

}  // namespace bfhpo::inference
