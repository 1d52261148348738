#include "inference/posterior_predictive_check.hpp"

#include "common/csv_field.hpp"
#include "common/json_number.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "inference/marginal_likelihood.hpp"
#include "models/simulators/seed_mix.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>
#include <thread>

namespace bfhpo::inference {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Rest scores are means of multiples of 1 / (K - 1): two that are equal as
// numbers differ by rounding only, far below this.
constexpr double kTieTolerance = 1e-9;

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() < 2) return kNaN;
  const double mx = mean_of(x), my = mean_of(y);
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0.0 && syy > 0.0 ? sxy / std::sqrt(sxx * syy) : kNaN;
}

// Linear interpolation between order statistics of sorted, non-empty values.
double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

// Mean of `scores` over the persons whose rest score passes `in_group`.
template <typename InGroup>
double group_mean(const std::vector<double>& scores, const std::vector<double>& rests, const InGroup& in_group) {
  std::vector<double> group;
  for (size_t i = 0; i < scores.size(); ++i)
    if (in_group(rests[i])) group.push_back(scores[i]);
  return mean_of(group);
}

// Per item, the sd of its correlations with each other item over the persons
// who answered both (pairs with fewer than two such persons or no variance
// left out; NaN with fewer than two pairs left): [J], from pairwise sums.
torch::Tensor pair_correlation_sd(const torch::Tensor& scaled, const torch::Tensor& mask) {
  const auto y = scaled * mask;
  const auto n = mask.t().matmul(mask);              // [j, k]: persons who answered both
  const auto sum_j = y.t().matmul(mask);             // sum of y_j over them
  const auto square_j = (y * y).t().matmul(mask);
  const auto cross = y.t().matmul(y);
  const auto mean_j = sum_j / n, mean_k = sum_j.t() / n;
  const auto covariance = cross / n - mean_j * mean_k;
  const auto variance_j = square_j / n - mean_j * mean_j, variance_k = square_j.t() / n - mean_k * mean_k;
  const auto items = mask.size(1);
  const auto defined = n.ge(2.0) & variance_j.gt(1e-12) & variance_k.gt(1e-12) &
                       ~torch::eye(items, torch::TensorOptions().dtype(torch::kBool));
  const auto r = torch::where(defined, covariance / (variance_j * variance_k).clamp_min(1e-300).sqrt(),
                              torch::zeros_like(n));
  const auto count = defined.to(torch::kFloat64).sum(1);
  const auto mean = r.sum(1) / count.clamp_min(1.0);
  const auto centred = torch::where(defined, r - mean.unsqueeze(1), torch::zeros_like(r));
  const auto sd = (centred.pow(2).sum(1) / (count - 1.0).clamp_min(1.0)).sqrt();
  return torch::where(count.ge(2.0), sd, torch::full_like(sd, kNaN));
}

// Replicated matrices [R, P, J] (float32, 0 where missing), one from each of
// R sets of item parameters [R, J, D]: abilities from their conditional
// posterior on the grid given that set (every item and category in one
// product, [P, J K] x [R, J K, G]), then responses.
torch::Tensor replicate(const models::ItemResponseModel& model, const torch::Tensor& item_params,
                        const torch::Tensor& answered_one_hot, const torch::Tensor& mask, at::Generator& generator) {
  const int64_t sets = item_params.size(0), persons = mask.size(0), items = mask.size(1);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  const auto grid = torch::linspace(-kAbilityLimit, kAbilityLimit, kAbilityGridPoints, options);
  const auto params = item_params.to(torch::kFloat64);
  const auto log_p = models::category_probabilities(model, grid.unsqueeze(0).expand({sets, kAbilityGridPoints}), params)
                         .clamp_min(1e-300)
                         .log();  // [R, G, J, K]
  const auto log_likelihood = torch::matmul(answered_one_hot.reshape({persons, -1}),
                                            log_p.reshape({sets, kAbilityGridPoints, -1}).transpose(1, 2));  // [R, P, G]
  const auto weights = torch::softmax(log_likelihood - 0.5 * grid * grid, 2).reshape({sets * persons, -1});
  const auto cell = at::multinomial(weights, 1, true, generator).reshape({sets, persons});
  const double step = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);
  const auto theta = grid.index({cell}) + (at::rand({sets, persons}, generator, options) - 0.5) * step;
  const auto exceed = model.exceedance_probabilities(theta, params);  // [R, P, J, K-1]
  const auto u = at::rand({sets, persons, items}, generator, options);
  return (u.unsqueeze(-1) < exceed).sum(-1).to(torch::kFloat32) * mask;
}

// The fewest replications whose smallest tail probability 2 / (R + 1) lies below `level`.
int64_t fewest_replications_to_flag(double level) { return static_cast<int64_t>(std::ceil(2.0 / level)); }

}  // namespace

int64_t default_replications(int64_t statistics_per_item, double alpha) {
  const int64_t standard = PredictiveCheckOptions{}.replications;
  if (!(alpha > 0.0 && alpha < 1.0)) return standard;
  return std::max(standard, fewest_replications_to_flag(alpha / static_cast<double>(statistics_per_item)));
}

void check_options_valid(const PredictiveCheckOptions& options, int64_t statistics_per_item, const std::string& what) {
  if (options.replications < 2)
    throw UserError(what + ": at least 2 replications are needed. Fix: give 500 (0 leaves the check out)");
  if (!(options.alpha > 0.0 && options.alpha < 1.0))
    throw UserError(what + ": alpha must be between 0 and 1. Fix: give 0.05");
  const double level = options.alpha / static_cast<double>(statistics_per_item);
  const double smallest = 2.0 / static_cast<double>(options.replications + 1);
  if (level <= smallest)
    throw UserError(what + ": with " + std::to_string(options.replications) + " replications no tail probability " +
                    "falls below alpha / " + std::to_string(statistics_per_item) + " = " + format_number(level, 3) +
                    ", so no item could be flagged. Fix: give at least " +
                    std::to_string(fewest_replications_to_flag(level)) + " replications, or a larger alpha");
}

std::vector<std::string> item_statistic_names(int64_t n_categories) {
  std::vector<std::string> names;
  for (int64_t k = 0; k < n_categories; ++k) names.push_back("p" + std::to_string(k));
  for (const char* name : {"item_rest_r", "low_mean", "high_mean", "pair_r_sd"}) names.emplace_back(name);
  return names;
}

torch::Tensor item_statistics(const torch::Tensor& responses, const torch::Tensor& mask, int64_t n_categories) {
  const auto y_tensor = responses.to(torch::kFloat64).contiguous();
  const auto m_tensor = mask.to(torch::kFloat64).contiguous();
  const auto y = y_tensor.accessor<double, 2>();
  const auto m = m_tensor.accessor<double, 2>();
  const int64_t persons = y.size(0), items = y.size(1);
  const double top = static_cast<double>(n_categories - 1);
  std::vector<double> person_sum(static_cast<size_t>(persons), 0.0), person_count(static_cast<size_t>(persons), 0.0);
  for (int64_t p = 0; p < persons; ++p)
    for (int64_t j = 0; j < items; ++j)
      if (m[p][j] > 0.0) {
        person_sum[static_cast<size_t>(p)] += y[p][j] / top;
        person_count[static_cast<size_t>(p)] += 1.0;
      }
  auto out = torch::full({n_categories + 4, items}, kNaN, torch::kFloat64);
  auto o = out.accessor<double, 2>();
  for (int64_t j = 0; j < items; ++j) {
    std::vector<double> counts(static_cast<size_t>(n_categories), 0.0), scores, rests;
    double answered = 0.0;
    for (int64_t p = 0; p < persons; ++p) {
      if (m[p][j] <= 0.0) continue;
      answered += 1.0;
      counts[static_cast<size_t>(y[p][j])] += 1.0;
      const double others = person_count[static_cast<size_t>(p)] - 1.0;
      if (others <= 0.0) continue;
      scores.push_back(y[p][j] / top);
      rests.push_back((person_sum[static_cast<size_t>(p)] - y[p][j] / top) / others);
    }
    if (answered > 0.0)
      for (int64_t k = 0; k < n_categories; ++k) o[k][j] = counts[static_cast<size_t>(k)] / answered;
    o[n_categories][j] = pearson(scores, rests);
    if (rests.empty()) continue;
    auto sorted = rests;
    std::sort(sorted.begin(), sorted.end());
    const double lower = sorted_quantile(sorted, 1.0 / 3.0), upper = sorted_quantile(sorted, 2.0 / 3.0);
    o[n_categories + 1][j] = group_mean(scores, rests, [&](double rest) { return rest < lower - kTieTolerance; });
    o[n_categories + 2][j] = group_mean(scores, rests, [&](double rest) { return rest > upper + kTieTolerance; });
  }
  out[n_categories + 3] = pair_correlation_sd(y_tensor / top, m_tensor);
  return out;
}

double tail_probability(double observed, const std::vector<double>& replicated) {
  if (std::isnan(observed)) return kNaN;
  double at_least = 1.0, at_most = 1.0, defined = 1.0;
  for (double value : replicated) {
    if (std::isnan(value)) continue;
    defined += 1.0;
    at_least += value >= observed ? 1.0 : 0.0;
    at_most += value <= observed ? 1.0 : 0.0;
  }
  return std::min(1.0, 2.0 * std::min(at_least, at_most) / defined);
}

const ItemStatisticCheck& ItemCheck::worst() const {
  size_t worst = 0;
  for (size_t s = 1; s < statistics.size(); ++s)
    if (statistics[s].tail_probability < statistics[worst].tail_probability || std::isnan(statistics[worst].tail_probability))
      worst = s;
  return statistics[worst];
}

std::vector<std::string> PredictiveCheck::misfitting_items() const {
  std::vector<std::string> names;
  for (const auto& item : items)
    if (item.misfit) names.push_back(item.item);
  return names;
}

json PredictiveCheck::to_json() const {
  json item_array = json::array();
  for (const auto& item : items) {
    json statistics = json::object();
    for (const auto& s : item.statistics)
      statistics[s.statistic] = {{"observed", number_or_null(s.observed)},
                                 {"replicated_mean", number_or_null(s.replicated_mean)},
                                 {"replicated_q2.5", number_or_null(s.replicated_q025)},
                                 {"replicated_q97.5", number_or_null(s.replicated_q975)},
                                 {"tail_probability", number_or_null(s.tail_probability)}};
    item_array.push_back({{"item", item.item}, {"misfit", item.misfit}, {"statistics", statistics}});
  }
  return {{"replications", replications},
          {"alpha", alpha},
          {"per_statistic_level", per_statistic_level},
          {"misfitting", misfitting_items()},
          {"items", item_array}};
}

std::string PredictiveCheck::to_csv() const {
  std::ostringstream out;
  out << std::setprecision(10)
      << "item,statistic,observed,replicated_mean,replicated_q2.5,replicated_q97.5,tail_probability,misfit\n";
  const auto cell = [&](double value) {
    if (std::isnan(value))
      out << ",NA";
    else
      out << "," << value;
  };
  for (const auto& item : items)
    for (const auto& s : item.statistics) {
      out << csv_field(item.item) << "," << s.statistic;
      for (double value : {s.observed, s.replicated_mean, s.replicated_q025, s.replicated_q975, s.tail_probability})
        cell(value);
      out << "," << (item.misfit ? "true" : "false") << "\n";
    }
  return out.str();
}

std::vector<std::string> PredictiveCheck::warnings() const {
  std::vector<std::string> lines;
  for (const auto& item : items) {
    if (!item.misfit) continue;
    const auto& s = item.worst();
    lines.push_back("model check: item '" + item.item + "' misfits: " + s.statistic + " " + format_number(s.observed, 3) +
                    " observed, " + format_number(s.replicated_mean, 3) + " replicated (95% of replications in " +
                    format_number(s.replicated_q025, 3) + " to " + format_number(s.replicated_q975, 3) +
                    "), tail probability " + format_number(s.tail_probability, 3) + " < " +
                    format_number(per_statistic_level, 3));
  }
  return lines;
}

PredictiveCheck posterior_predictive_check(const models::ItemResponseModel& model, const ResponseMatrix& data,
                                           const PosteriorDraws& posterior, const PredictiveCheckOptions& options) {
  const int64_t n_categories = model.n_categories();
  const auto names = item_statistic_names(n_categories);
  const auto n_statistics = static_cast<int64_t>(names.size());
  check_options_valid(options, n_statistics, "posterior predictive check");
  torch::NoGradGuard no_grad;
  const auto observed_tensor = item_statistics(data.responses, data.mask, n_categories);
  const auto answered_one_hot =
      torch::one_hot(data.responses.to(torch::kLong), n_categories).to(torch::kFloat64) *
      data.mask.to(torch::kFloat64).unsqueeze(-1);
  const int64_t n_draws = posterior.draws.size(1);
  // Replications simulated at once: their [R, P, G] ability table within kGridTableElements (8 MB). Each
  // chunk has its own generator and the chunks share the cores (one BLAS thread each, no waiting on
  // each other's small products), so the check is the same whatever the number of cores.
  const int64_t at_once = std::max<int64_t>(1, kGridTableElements / (data.responses.size(0) * kAbilityGridPoints));
  const int64_t chunks = (options.replications + at_once - 1) / at_once;
  std::vector<std::vector<torch::Tensor>> chunk_statistics(static_cast<size_t>(chunks));
  const auto replicate_chunk = [&](int64_t chunk) {
    const int64_t start = chunk * at_once, count = std::min(at_once, options.replications - start);
    std::vector<int64_t> chosen;
    for (int64_t r = start; r < start + count; ++r) chosen.push_back(r * n_draws / options.replications);
    const auto params = posterior.draws.index_select(1, torch::tensor(chosen, torch::kLong)).transpose(0, 1);
    auto generator =
        at::make_generator<at::CPUGeneratorImpl>(models::mix_seed(options.seed, 0x50505043ULL + static_cast<uint64_t>(chunk)));
    const auto y_rep = replicate(model, params, answered_one_hot, data.mask, generator);
    for (int64_t r = 0; r < count; ++r)
      chunk_statistics[static_cast<size_t>(chunk)].push_back(item_statistics(y_rep[r], data.mask, n_categories));
  };
  {
    const trials::SingleThreadedKernels single_threaded;
    const int64_t workers = std::min<int64_t>(chunks, trials::available_cpus());
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
    for (int64_t w = 0; w < workers; ++w)
      threads.emplace_back([&, w] {
        try {
          torch::NoGradGuard worker_no_grad;
          for (int64_t chunk = w; chunk < chunks; chunk += workers) replicate_chunk(chunk);
        } catch (...) {
          errors[static_cast<size_t>(w)] = std::current_exception();
        }
      });
    for (auto& thread : threads) thread.join();
    for (const auto& error : errors)
      if (error) std::rethrow_exception(error);
  }
  std::vector<torch::Tensor> replicated_parts;
  for (auto& statistics : chunk_statistics)
    for (auto& part : statistics) replicated_parts.push_back(std::move(part));
  const auto replicated_tensor = torch::stack(replicated_parts);  // [R, S, J]
  const auto obs = observed_tensor.accessor<double, 2>();
  const auto rep = replicated_tensor.accessor<double, 3>();

  PredictiveCheck check;
  check.replications = options.replications;
  check.alpha = options.alpha;
  check.per_statistic_level = options.alpha / static_cast<double>(n_statistics);
  for (size_t j = 0; j < data.item_names.size(); ++j) {
    ItemCheck item{data.item_names[j], {}, false};
    for (int64_t s = 0; s < n_statistics; ++s) {
      std::vector<double> values;
      for (int64_t r = 0; r < options.replications; ++r)
        if (!std::isnan(rep[r][s][static_cast<int64_t>(j)])) values.push_back(rep[r][s][static_cast<int64_t>(j)]);
      ItemStatisticCheck statistic{names[static_cast<size_t>(s)], obs[s][static_cast<int64_t>(j)], kNaN, kNaN, kNaN,
                                   kNaN};
      statistic.tail_probability = tail_probability(statistic.observed, values);
      if (!values.empty()) {
        statistic.replicated_mean = mean_of(values);
        std::sort(values.begin(), values.end());
        statistic.replicated_q025 = sorted_quantile(values, 0.025);
        statistic.replicated_q975 = sorted_quantile(values, 0.975);
      }
      item.misfit = item.misfit || statistic.tail_probability < check.per_statistic_level;
      item.statistics.push_back(statistic);
    }
    check.items.push_back(item);
  }
  return check;
}

}  // namespace bfhpo::inference
