#include "inference/item_estimates.hpp"

#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "inference/marginal_likelihood.hpp"
#include "inference/posterior_inference.hpp"
#include "memory/meter.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace bfhpo::inference {
namespace {

using ScaleRole = models::ItemResponseModel::ScaleRole;

// An item's Location components in their order; with more than one (a
// graded model's thresholds b_1..b_{K-1}) they must stay in that order.
std::vector<int64_t> ordered_components(const models::ItemResponseModel& model) {
  std::vector<int64_t> ordered;
  const auto roles = model.scale_roles();
  for (int64_t d = 0; d < static_cast<int64_t>(roles.size()); ++d)
    if (roles[static_cast<size_t>(d)] == ScaleRole::Location) ordered.push_back(d);
  return ordered;
}

// Free variables [1, J, D] -> item parameters [1, J, D]: each ordered
// component after the first is the previous one plus softplus(its variable).
torch::Tensor item_parameters(const torch::Tensor& free, const std::vector<int64_t>& ordered) {
  if (ordered.size() < 2) return free;
  std::vector<torch::Tensor> columns = free.unbind(-1);
  for (size_t i = 1; i < ordered.size(); ++i)
    columns[static_cast<size_t>(ordered[i])] =
        columns[static_cast<size_t>(ordered[i - 1])] + torch::softplus(free.select(-1, ordered[i]));
  return torch::stack(columns, -1);
}

// Persons x grid points tables estimate_item_parameters holds at once (see the header).
constexpr double kGridTablesAtOnce = 4.0;


}  // namespace

double item_estimate_memory_mb(int64_t persons, int64_t items, int64_t categories) {
  const double p = static_cast<double>(persons);
  const double tables = kGridTablesAtOnce * p * static_cast<double>(kAbilityGridPoints);
  const double one_hot = p * static_cast<double>(items) * static_cast<double>(categories + 1);
  return (tables + one_hot) * sizeof(double) / memory::kBytesPerMb;
}

void check_item_estimate_memory(const ResponseMatrix& data, int64_t categories, std::optional<double> budget_mb) {
  const MemoryBudget budget = budget_mb ? MemoryBudget{*budget_mb, ""} : default_inference_budget();
  const int64_t persons = data.responses.size(0), items = data.responses.size(1);
  const double need_mb = item_estimate_memory_mb(persons, items, categories);
  if (need_mb <= budget.mb) return;
  const double per_person_mb = item_estimate_memory_mb(1, items, categories);
  const auto fitting = static_cast<int64_t>(std::floor(budget.mb / per_person_mb));
  throw UserError(data.source + ": estimating each item's parameters on " + std::to_string(persons) +
                  " persons x " + std::to_string(items) + " items (every ability integrated out on a grid of " +
                  std::to_string(kAbilityGridPoints) + " points a person) needs about " + format_whole_mb(need_mb) +
                  ", more than the " + format_whole_mb(budget.mb) + " there is" +
                  (budget.what.empty() ? "" : " (" + budget.what + ")") + ". Fix: give a random sample of at most " +
                  std::to_string(fitting) + " persons (rows), or run where more memory is free");
}

torch::Tensor estimate_item_parameters(const models::ItemResponseModel& model, const ResponseMatrix& data) {
  const MarginalLikelihood likelihood(model, data);
  const int64_t items = likelihood.items();
  const std::vector<int64_t> ordered = ordered_components(model);
  // Start: a = 1, every item's ordered locations from -1 to 1 (gaps of 2 / (n - 1)), the rest 0.
  auto start = torch::zeros({1, items, model.param_dim()}, torch::kFloat64);
  if (ordered.size() > 1) {
    const double gap = 2.0 / static_cast<double>(ordered.size() - 1);
    start.select(-1, ordered.front()).fill_(-1.0);
    for (size_t i = 1; i < ordered.size(); ++i) start.select(-1, ordered[i]).fill_(std::log(std::expm1(gap)));
  }
  auto free = start.requires_grad_(true);
  torch::optim::LBFGS optimizer({free}, torch::optim::LBFGSOptions(1.0).max_iter(200).tolerance_grad(1e-7)
                                            .line_search_fn("strong_wolfe"));
  const double persons = static_cast<double>(likelihood.persons());
  const auto negative_log_posterior = [&] {
    optimizer.zero_grad();
    const auto params = item_parameters(free, ordered);
    // Scaled by the persons so that the tolerances mean the same at any size.
    auto loss = -(likelihood.differentiable_log_likelihood(params).sum() + model.log_prior(params).sum()) / persons;
    loss.backward();
    return loss;
  };
  optimizer.step(negative_log_posterior);
  torch::NoGradGuard no_grad;
  return item_parameters(free, ordered).squeeze(0).detach();
}

}  // namespace bfhpo::inference
