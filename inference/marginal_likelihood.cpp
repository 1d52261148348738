#include "inference/marginal_likelihood.hpp"

#include "trials/training_threads.hpp"

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <limits>
#include <vector>

namespace bfhpo::inference {

MarginalLikelihood::MarginalLikelihood(const models::ItemResponseModel& model, const ResponseMatrix& data)
    : model_(model) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  answered_one_hot_ = torch::one_hot(data.responses.to(torch::kLong), model.n_categories()).to(torch::kFloat64) *
                      data.mask.to(torch::kFloat64).unsqueeze(-1);
  const auto responses = data.responses.to(torch::kLong).contiguous();
  const auto answered = data.mask.to(torch::kBool).contiguous();
  const int64_t n_persons = responses.size(0), n_items = responses.size(1);
  answer_of_.assign(static_cast<size_t>(n_items * n_persons), -1);
  for (int64_t p = 0; p < n_persons; ++p)
    for (int64_t j = 0; j < n_items; ++j)
      if (answered.data_ptr<bool>()[p * n_items + j])
        answer_of_[static_cast<size_t>(j * n_persons + p)] = responses.data_ptr<int64_t>()[p * n_items + j];
  persons_by_answer_.resize(static_cast<size_t>(n_items));
  for (int64_t j = 0; j < n_items; ++j) {
    std::vector<std::vector<int64_t>> persons(static_cast<size_t>(model.n_categories()) + 1);
    for (int64_t p = 0; p < n_persons; ++p) {
      const int64_t answer = answer_of_[static_cast<size_t>(j * n_persons + p)];
      persons[answer >= 0 ? static_cast<size_t>(answer) : persons.size() - 1].push_back(p);
    }
    for (const auto& group : persons) persons_by_answer_[static_cast<size_t>(j)].push_back(torch::tensor(group, torch::kLong));
  }
  grid_ = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  log_trapezoid_ = torch::full({kAbilityGridPoints}, std::log(step), options);
  log_trapezoid_[0] -= std::log(2.0);
  log_trapezoid_[kAbilityGridPoints - 1] -= std::log(2.0);
  log_grid_weight_ = log_trapezoid_ - 0.5 * grid_ * grid_ - 0.5 * std::log(2.0 * M_PI);
  grid_weight_ = log_grid_weight_.exp();
}

torch::Tensor MarginalLikelihood::category_grid(const torch::Tensor& params) const {
  const int64_t sets = params.size(0);
  const auto theta = grid_.unsqueeze(0).expand({sets, grid_points()});
  return models::category_probabilities(model_, theta, params.to(torch::kFloat64).unsqueeze(1))
      .squeeze(2)
      .transpose(1, 2)
      .contiguous();
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
  const int64_t chunks = (sets + per_chunk - 1) / per_chunk;
  std::vector<torch::Tensor> parts(static_cast<size_t>(chunks));
  trials::for_each_on_workers(chunks, [&](int64_t chunk) {
    const int64_t start = chunk * per_chunk;
    parts[static_cast<size_t>(chunk)] = differentiable_log_likelihood(params.narrow(0, start, std::min(per_chunk, sets - start)));
  });
  return torch::cat(parts);
}

MarginalLikelihood::PersonGridTable MarginalLikelihood::table(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const auto log_values = log_table(params);
  const auto log_scale = std::get<0>(log_values.max(2));
  const auto scaled = (log_values - log_scale.unsqueeze(2)).exp();
  return {scaled, log_scale, torch::matmul(scaled, grid_weight_)};
}

torch::Tensor MarginalLikelihood::log_likelihood(const PersonGridTable& table) {
  return (table.marginal.log() + table.log_scale).sum(1);
}

torch::Tensor MarginalLikelihood::changed_item_log_likelihood(const PersonGridTable& table, int64_t item,
                                                              const torch::Tensor& from, const torch::Tensor& to) const {
  torch::NoGradGuard no_grad;
  if (table.scaled.size(0) != 1)
    throw std::logic_error("MarginalLikelihood::changed_item_log_likelihood: a table of one set");
  // The ratios in double, then at most kLargestChangedRatio: the float32 product below cannot overflow (a
  // scaled row is at most 1, a grid weight below 1, G terms).
  const auto ratio =
      (category_grid(to) / category_grid(from.unsqueeze(0)).clamp_min(1e-300)).clamp_max(kLargestChangedRatio);
  const auto weighted_ratio = (ratio * grid_weight_).to(torch::kFloat32);  // [S, K, G]
  const auto& groups = persons_by_answer_[static_cast<size_t>(item)];
  // The persons who left the item out keep their integral; every person keeps their scale.
  const auto rows = table.scaled[0].to(torch::kFloat32), marginal = table.marginal[0];
  auto log_likelihood = torch::full({to.size(0)}, (table.log_scale[0].sum() +
                                                   marginal.index_select(0, groups.back()).log().sum()).item<double>(),
                                    torch::TensorOptions().dtype(torch::kFloat64));
  // Person p answering k: sum_g scaled[p, g] w_g ratio[k, g], the persons of a category in one float32
  // product (each integral a sum of G non-negative terms: within G 2^-24 of itself), its log at least
  // that of the smallest normal float (a person no draw can reach stays finite), summed in double.
  for (size_t k = 0; k + 1 < groups.size(); ++k)
    if (groups[k].numel() > 0)
      log_likelihood += torch::matmul(rows.index_select(0, groups[k]), weighted_ratio.select(1, static_cast<int64_t>(k)).t())
                            .clamp_min_(std::numeric_limits<float>::min())
                            .log_()
                            .sum(0, false, torch::kFloat64);
  return log_likelihood;
}

namespace {

void check_made_by_table(const MarginalLikelihood::PersonGridTable& table) {
  if (!table.scaled.is_contiguous() || !table.marginal.is_contiguous() || !table.log_scale.is_contiguous())
    throw std::logic_error("MarginalLikelihood: a person-grid table not as table() made it");
}

}  // namespace

double MarginalLikelihood::moved_log_likelihood(const PersonGridTable& table, int64_t s, int64_t item,
                                                const double* ratio, double* marginal) const {
  check_made_by_table(table);
  const int64_t n_persons = persons(), n_grid = grid_points(), n_categories = answered_one_hot_.size(2);
  const double* rows = table.scaled.data_ptr<double>() + s * n_persons * n_grid;
  const double* before = table.marginal.data_ptr<double>() + s * n_persons;
  const double* scales = table.log_scale.data_ptr<double>() + s * n_persons;
  const double* weights = grid_weight_.data_ptr<double>();
  // The grid weights times the ratio, a row a category: [K, G].
  std::vector<double> weighted(static_cast<size_t>(n_categories * n_grid));
  for (int64_t k = 0; k < n_categories; ++k)
    for (int64_t g = 0; g < n_grid; ++g)
      weighted[static_cast<size_t>(k * n_grid + g)] = weights[g] * ratio[k * n_grid + g];
  const int64_t* answers = answer_of_.data() + item * n_persons;
  double log_likelihood = 0.0;
  for (int64_t person = 0; person < n_persons; ++person) {
    double integral = before[person];  // unchanged where the person left the item out
    if (answers[person] >= 0) {
      const double* row = rows + person * n_grid;
      const double* factor = weighted.data() + answers[person] * n_grid;
      // Four partial sums in a fixed order: the additions need not wait on one another.
      double partial[4] = {0.0, 0.0, 0.0, 0.0};
      int64_t g = 0;
      for (; g + 4 <= n_grid; g += 4)
        for (int64_t lane = 0; lane < 4; ++lane) partial[lane] += row[g + lane] * factor[g + lane];
      for (; g < n_grid; ++g) partial[0] += row[g] * factor[g];
      integral = (partial[0] + partial[1]) + (partial[2] + partial[3]);
    }
    marginal[person] = integral;
    log_likelihood += std::log(integral) + scales[person];
  }
  return log_likelihood;
}

void MarginalLikelihood::move(PersonGridTable& table, int64_t s, int64_t item, const double* ratio,
                              const double* marginal) const {
  check_made_by_table(table);
  const int64_t n_persons = persons(), n_grid = grid_points();
  double* rows = table.scaled.data_ptr<double>() + s * n_persons * n_grid;
  const int64_t* answers = answer_of_.data() + item * n_persons;
  for (int64_t person = 0; person < n_persons; ++person) {
    if (answers[person] < 0) continue;
    double* row = rows + person * n_grid;
    const double* factor = ratio + answers[person] * n_grid;
    for (int64_t g = 0; g < n_grid; ++g) row[g] *= factor[g];
  }
  std::copy_n(marginal, n_persons, table.marginal.data_ptr<double>() + s * n_persons);
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

}  // namespace bfhpo::inference
