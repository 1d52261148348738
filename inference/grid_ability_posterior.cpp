#include "inference/grid_ability_posterior.hpp"

#include "inference/ability_grid.hpp"
#include "inference/grid_row_kernel.hpp"
#include "inference/marginal_likelihood.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bfhpo::inference {
namespace {

// The grid's rows as grid_row_posterior reads them: G rounded up to its padding.
constexpr int64_t kPaddedGridPoints = (kAbilityGridPoints + kGridRowPadding - 1) / kGridRowPadding * kGridRowPadding;

// `values` [..., G] float32 as a contiguous [..., kPaddedGridPoints] (zeros in the padding).
torch::Tensor padded(const torch::Tensor& values) {
  return torch::constant_pad_nd(values, {0, kPaddedGridPoints - kAbilityGridPoints}, 0.0).contiguous();
}

// Float32 storage of `elements` for a draw table: the calling thread's kept one when no table uses it, which
// it then keeps for its next data set. A table of 200 draws x 500 persons is 48 MB, above glibc's largest
// mmap threshold (32 MiB), so fresh storage is mapped and faulted in page by page every data set (~450
// faults; 100 data sets of 500 x 20 faulted 102,000 pages with fresh tables, 54,000 with kept ones).
torch::Tensor table_storage(int64_t elements) {
  thread_local torch::Tensor kept;
  if (kept.defined() && kept.storage().use_count() > 1) return torch::empty({elements}, torch::kFloat32);
  if (!kept.defined() || kept.numel() < elements) {
    kept = torch::Tensor();  // the smaller one freed before the larger is made
    kept = torch::empty({elements}, torch::kFloat32);
  }
  return kept.narrow(0, 0, elements);
}

}  // namespace

GridAbilityPosterior::GridAbilityPosterior(const models::ItemResponseModel& model, const ResponseMatrix& data)
    : model_(model), persons_(data.responses.size(0)) {
  const int64_t items = data.responses.size(1);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  grid_ = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  auto log_trapezoid = torch::full({kAbilityGridPoints}, std::log(step), options);
  log_trapezoid[0] -= std::log(2.0);
  log_trapezoid[kAbilityGridPoints - 1] -= std::log(2.0);
  log_grid_weight_ = padded((log_trapezoid - 0.5 * grid_ * grid_).to(torch::kFloat32));
  const auto categories = data.responses.to(torch::kLong).contiguous();
  const auto answered = data.mask.to(torch::kFloat32).contiguous();
  const int64_t* category = categories.data_ptr<int64_t>();
  const float* mask = answered.data_ptr<float>();
  const int64_t n_categories = model.n_categories();
  person_start_.push_back(0);
  for (int64_t p = 0; p < persons_; ++p) {
    for (int64_t j = 0; j < items; ++j)
      if (mask[p * items + j] > 0.0f)
        answered_rows_.push_back((j * n_categories + category[p * items + j]) * kPaddedGridPoints);
    person_start_.push_back(static_cast<int64_t>(answered_rows_.size()));
  }
}

std::vector<std::pair<int64_t, int64_t>> grid_chunks(int64_t sets, int64_t persons) {
  const int64_t per_chunk = std::max<int64_t>(1, kGridTableElements / std::max<int64_t>(1, persons * kAbilityGridPoints));
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t start = 0; start < sets; start += per_chunk) chunks.emplace_back(start, std::min(per_chunk, sets - start));
  return chunks;
}

torch::Tensor GridAbilityPosterior::log_probabilities(const torch::Tensor& params) const {
  torch::NoGradGuard no_grad;
  const int64_t sets = params.size(0), grid_points = grid_.size(0);
  const auto on_grid = grid_.unsqueeze(0).expand({sets, grid_points});
  return padded(models::category_probabilities(model_, on_grid, params.to(torch::kFloat64))
                    .clamp_min(1e-300)
                    .log()
                    .to(torch::kFloat32)
                    .permute({0, 2, 3, 1}));  // [S, J, K, G padded]
}

void GridAbilityPosterior::posteriors_into(const torch::Tensor& params, float* posterior, float* log_integral) const {
  const auto log_p = log_probabilities(params);
  const int64_t set_size = log_p[0].numel(), grid_points = kAbilityGridPoints;
  const float* weight = log_grid_weight_.data_ptr<float>();
  std::vector<float> scratch(posterior ? 0 : static_cast<size_t>(grid_points));
  for (int64_t s = 0; s < params.size(0); ++s) {
    const float* set = log_p.data_ptr<float>() + s * set_size;
    for (int64_t p = 0; p < persons_; ++p) {
      const auto first = person_start_[static_cast<size_t>(p)];
      float* row = posterior ? posterior + (s * persons_ + p) * grid_points : scratch.data();
      log_integral[s * persons_ + p] =
          grid_row_posterior(set, answered_rows_.data() + first, person_start_[static_cast<size_t>(p) + 1] - first,
                             weight, grid_points, row);
    }
  }
}

torch::Tensor GridAbilityPosterior::operator()(const torch::Tensor& params) const {
  auto table = torch::empty({params.size(0), persons_, kAbilityGridPoints}, torch::kFloat32);
  auto log_integral = torch::empty({params.size(0), persons_}, torch::kFloat32);
  posteriors_into(params, table.data_ptr<float>(), log_integral.data_ptr<float>());
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
    auto log_integral = torch::empty({count, persons_}, torch::kFloat32);
    posteriors_into(params.narrow(0, start, count), nullptr, log_integral.data_ptr<float>());
    parts[static_cast<size_t>(chunk)] = marginal_from_integrals(log_integral, persons_);
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
  posterior_ = table_storage(sets * persons_ * grid_points).view({sets, persons_, grid_points});
  log_integral_ = torch::empty({sets, persons_}, torch::kFloat32);
  rows_ = torch::arange(sets, torch::kLong);
  const auto chunks = grid_chunks(sets, persons_);
  trials::for_each_on_workers(static_cast<int64_t>(chunks.size()), [&](int64_t chunk) {
    const auto [start, count] = chunks[static_cast<size_t>(chunk)];
    abilities.posteriors_into(params.narrow(0, start, count), posterior_.data_ptr<float>() + start * persons_ * grid_points,
                              log_integral_.data_ptr<float>() + start * persons_);
  });
}

torch::Tensor DrawAbilityTable::log_marginal_likelihood() const {
  return marginal_from_integrals(log_integral_.index_select(0, rows_), persons_);
}

torch::Tensor DrawAbilityTable::posteriors(const torch::Tensor& indices) const {
  return posterior_.index_select(0, rows_.index_select(0, indices));
}

const float* DrawAbilityTable::draw_rows(int64_t draw) const {
  return posterior_.data_ptr<float>() + rows_.data_ptr<int64_t>()[draw] * posterior_[0].numel();
}

void DrawAbilityTable::select(const torch::Tensor& rows) { rows_ = rows_.index_select(0, rows); }

}  // namespace bfhpo::inference
