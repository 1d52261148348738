#include "inference/posterior_inference.hpp"

#include "report/trial_facts.hpp"

#include "common/config_reader.hpp"
#include "common/csv_field.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "inference/ability_grid.hpp"
#include "inference/grid_ability_posterior.hpp"
#include "inference/spread_at_shape.hpp"
#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "memory/estimate.hpp"
#include "memory/meter.hpp"
#include "models/approximator_weights.hpp"
#include "models/simulators/item_response_model.hpp"
#include "trials/export.hpp"
#include "trials/study_settings.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>

namespace bfhpo::inference {
namespace {

using nlohmann::json;

struct ModelFiles {
  json config;
  std::filesystem::path weights;
  std::string source;
  std::vector<std::filesystem::path> read;  // the model's files: the configuration's, its training's record
};

ModelFiles train_output_files(const std::filesystem::path& dir) {
  const auto config_file = dir / "config.json";
  if (!std::filesystem::exists(config_file))
    throw UserError(dir.string() + ": no config.json in this folder. Fix: give a folder `bfhpo train` wrote, "
                                   "or a training study file");
  ModelFiles files{read_config_file(config_file, "model configuration"), dir / "weights.pt", config_file.string(),
                   {config_file}};
  // `bfhpo train` writes result.json beside config.json: the training's record, which no output may replace.
  if (std::filesystem::exists(dir / "result.json")) files.read.push_back(dir / "result.json");
  return files;
}

ModelFiles best_trial_files(const std::filesystem::path& study_file, const std::optional<std::string>& storage) {
  const hpo::StudySpec spec = hpo::load_study_spec(study_file, storage);
  if (!spec.has_simulator())
    throw UserError::at(study_file.string(), "simulator", "not a training study, so it has no trained model",
                        "give a training study or a folder `bfhpo train` wrote");
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  if (!report::ranked_best(spec, study.trials())) throw hpo::no_best_trial_error(spec, study.trials());
  const json best = trials::best_configuration_json(spec, study.trials());
  if (!best["weights"].is_string())
    throw UserError(study_file.string() + ": the best trial (" + best["trial"].dump() +
                    ") saved no weights. Fix: run `bfhpo optimize` with this version, or `bfhpo train --params`");
  std::vector<std::filesystem::path> read{study_file};
  if (!hpo::is_postgres_url(spec.storage.string())) read.push_back(spec.storage);
  return {best["config"], best["weights"].get<std::string>(), study_file.string(), read};
}

double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

struct Summary {
  double mean, sd, q025, q50, q975;
};

Summary summarize(std::vector<double> values) {
  const double n = static_cast<double>(values.size());
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= n;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  std::sort(values.begin(), values.end());
  return {mean, values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0, quantile(values, 0.025),
          quantile(values, 0.5), quantile(values, 0.975)};
}

// What the summaries report: the model's parameters, with a = exp(log a) before log_a.
std::vector<std::string> reported_parameters(const std::vector<std::string>& names) {
  std::vector<std::string> reported;
  for (const auto& name : names) {
    if (name == "log_a") reported.push_back("a");
    reported.push_back(name);
  }
  return reported;
}

// Draws of item j's parameter (one of the model's, or "a") in double.
std::vector<double> parameter_draws(const torch::Tensor& draws, const std::vector<std::string>& names, int64_t item,
                                    const std::string& parameter) {
  const std::string column_name = parameter == "a" ? "log_a" : parameter;
  const auto index = std::find(names.begin(), names.end(), column_name) - names.begin();
  auto column = draws[item].select(1, index).to(torch::kFloat64);
  if (parameter == "a") column = column.exp();
  const auto contiguous = column.contiguous();
  return std::vector<double>(contiguous.data_ptr<double>(), contiguous.data_ptr<double>() + contiguous.numel());
}

void warn_outside(std::vector<std::string>& warnings, const std::string& what, int64_t value, int64_t low,
                  int64_t high) {
  if (value >= low && value <= high) return;
  warnings.push_back(std::to_string(value) + " " + what + ", outside the " + std::to_string(low) + " to " +
                     std::to_string(high) + " the model trained on: the posterior is extrapolated");
}

std::string percent(double share) {
  std::ostringstream out;
  out << std::setprecision(3) << 100.0 * share << "%";
  return out.str();
}


// Bytes held at most per draw of one item (a flow row), every term in the
// order infer_posterior allocates it:
//   - a flow pass under no-grad (the draws, then their log q): the context
//     repeated per draw [C], the row and a few temporaries [4 D + 2], one
//     subnet's widest moment (its input, a Linear's output and activation);
//   - the draws of a round, those kept, those outside the support, their
//     cat and the result [5 D];
//   - the prior's log-density in double, over parameters and thresholds [2 (D + K)];
//   - log q [1], and the summary's double copies of one parameter [4];
//   - the draw's CSV line (the item's name, its index, D + 1 numbers of at
//     most 16 characters) three times: a string stream doubles its buffer
//     as it grows, and str() copies it.
double bytes_per_draw(const trials::TrialConfig& config, size_t item_name_bytes) {
  const auto& spec = config.approximator;
  const double d = static_cast<double>(spec.param_dim), context = static_cast<double>(spec.context_dim());
  const double width = static_cast<double>(spec.flow.subnet_width);
  const double subnet_input = d - std::floor(d / 2) + context;
  const double widest = spec.flow.subnet_depth > 0 ? std::max(subnet_input + 2 * width, 3 * width) : subnet_input + 2 * d;
  const double floats = context + 4 * d + 2 + widest + 5 * d + 1;
  const double doubles = 2 * (d + static_cast<double>(spec.n_categories)) + 4;
  const double csv_line = static_cast<double>(item_name_bytes) + 2 + 20 + (d + 1) * 17 + 1;
  return 4 * floats + 8 * doubles + 3 * csv_line;
}

// The summary network over [1, P, J] under no-grad is bounded by a training
// step's estimate at batch 1 (which also keeps what backward needs): the
// per-item stage over every cell and the attention's [heads, J, J] scores.
double summary_mb(const trials::TrialConfig& config, int64_t persons, int64_t items) {
  return memory::estimate_peak_memory_mb(config.approximator, memory::StepShape{1, items, persons});
}

// The largest value in [low, high] for which `fits` holds (`fits` holds at low, and is monotone), by bisection.
template <typename Fits>
int64_t largest_fitting(int64_t low, int64_t high, const Fits& fits) {
  while (low < high) {
    const int64_t middle = low + (high - low + 1) / 2;
    if (fits(middle))
      low = middle;
    else
      high = middle - 1;
  }
  return low;
}


constexpr int kMaxProposalRounds = 50;

// n draws per item inside the prior's support [J, n, D + 1], each draw's
// log q in its last column, the flow's draws mapped by `spread` about
// `center` (set here to each item's mean of the first round's draws, [J, D]):
// each round draws n more for every item and keeps, per item, the ones the
// prior allows, until every item has n (or kMaxProposalRounds rounds, then
// the item keeps draws outside the support too, with a warning). The flow's
// normals come from `generator`.
torch::Tensor draws_in_support(models::ContinuousApproximatorImpl& approximator,
                               const models::ItemResponseModel& model, const models::SummaryOutput& summary,
                               int64_t n, const std::vector<std::string>& item_names,
                               const PosteriorSpread& spread, torch::Tensor& center, std::vector<std::string>& warnings,
                               const at::Generator& generator) {
  const int64_t n_items = summary.item_context.size(1);
  std::vector<std::vector<torch::Tensor>> kept(static_cast<size_t>(n_items)), outside(static_cast<size_t>(n_items));
  std::vector<int64_t> count(static_cast<size_t>(n_items), 0);
  int64_t proposed = 0, accepted = 0;
  for (int round = 0; round < kMaxProposalRounds; ++round) {
    const auto [flow_theta, flow_log_q] = approximator.sample_given(n, summary, generator);
    if (round == 0) center = flow_theta[0].mean(1);
    const auto theta = spread.apply(flow_theta[0], center);
    const auto log_q = flow_log_q[0] - spread.log_scale_sum();
    const auto inside = torch::isfinite(model.log_prior(theta.to(torch::kFloat64)));  // [J, n]
    const auto draws = torch::cat({theta, log_q.unsqueeze(-1)}, -1);                 // [J, n, D + 1]
    bool complete = true;
    for (int64_t j = 0; j < n_items; ++j) {
      auto& have = count[static_cast<size_t>(j)];
      if (have >= n) continue;
      proposed += n;
      const auto good = draws[j].index({inside[j]});
      accepted += good.size(0);
      kept[static_cast<size_t>(j)].push_back(good);
      if (round == 0) outside[static_cast<size_t>(j)].push_back(draws[j].index({inside[j].logical_not()}));
      have += good.size(0);
      complete = complete && have >= n;
    }
    if (complete) break;
  }
  std::vector<torch::Tensor> items;
  for (int64_t j = 0; j < n_items; ++j) {
    auto& parts = kept[static_cast<size_t>(j)];
    if (count[static_cast<size_t>(j)] < n) {
      warnings.push_back("item '" + item_names[static_cast<size_t>(j)] + "': only " +
                         std::to_string(count[static_cast<size_t>(j)]) + " of " + std::to_string(kMaxProposalRounds * n) +
                         " draws inside the prior's support; the rest of its draws are outside it. The estimator "
                         "is poor for this item: train it longer or on data like these");
      parts.push_back(outside[static_cast<size_t>(j)].front());
    }
    items.push_back(torch::cat(parts).narrow(0, 0, n));
  }
  if (accepted < proposed)
    warnings.push_back(percent(1.0 - static_cast<double>(accepted) / static_cast<double>(proposed)) +
                       " of the flow's draws fell outside the prior's support (thresholds out of order) and were "
                       "drawn again");
  return torch::stack(items);
}

}  // namespace

TrainedModel load_trained_model(const std::filesystem::path& model_dir_or_study,
                                const std::optional<std::string>& storage_override) {
  if (!std::filesystem::exists(model_dir_or_study))
    throw UserError(model_dir_or_study.string() + ": no such file or folder. Fix: give a folder `bfhpo train` "
                                                  "wrote or a training study file");
  const ModelFiles files = std::filesystem::is_directory(model_dir_or_study) ? train_output_files(model_dir_or_study)
                                                                            : best_trial_files(model_dir_or_study, storage_override);
  TrainedModel model;
  model.config = trials::parse_trial_config(files.config, files.source);
  model.weights = files.weights;
  model.files = files.read;
  model.files.push_back(files.weights);
  if (!std::filesystem::is_regular_file(model.weights))
    throw UserError(model.weights.string() + ": the weights are missing. Fix: train again, or give the folder "
                                             "that holds them");
  model.config.approximator.memory = models::MemoryConfig{};
  model.approximator = models::make_approximator(model.config.approximator);
  models::load_checked_weights(*model.approximator, model.weights, files.source);
  model.approximator->eval();
  return model;
}

ResponseFormat response_format(const TrainedModel& model) {
  return {models::make_item_response_model(model.config.simulator)->n_categories(),
          model.config.simulator.missing.any()};
}

double inference_memory_mb(const TrainedModel& model, int64_t persons, int64_t items, int64_t draws,
                           size_t longest_item_name) {
  const double rows = static_cast<double>(items) * static_cast<double>(draws);
  // The draws' grid posteriors that infer_data_set holds beside them, where they fit (grid_ability_posterior.hpp).
  const double ability_table = DrawAbilityTable::fits(draws, persons)
                                   ? static_cast<double>(draws * persons * kAbilityGridPoints) * sizeof(float) * (1.0 + 1.0 / kAbilityGridPoints)
                                   : 0.0;
  return summary_mb(model.config, persons, items) +
         (rows * bytes_per_draw(model.config, longest_item_name) + ability_table) / memory::kBytesPerMb;
}

// The address space this process may still map under RLIMIT_AS; none without a limit.
std::optional<double> address_space_left_mb() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::ifstream statm("/proc/self/statm");
  double mapped_pages = 0.0;
  statm >> mapped_pages;
  const double mapped = mapped_pages * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  return std::max(0.0, static_cast<double>(limit.rlim_cur) - mapped) / memory::kBytesPerMb;
}

MemoryBudget default_inference_budget() {
  trials::MemorySettings settings;
  settings.budget_auto = true;
  MemoryBudget budget{*settings.budget_for(memory::device_total_bytes(torch::kCPU)), "0.9 of this machine's memory"};
  const auto left = address_space_left_mb();
  if (left && *left < budget.mb) budget = {*left, "the address space left under ulimit -v"};
  return budget;
}

void check_inference_memory(const TrainedModel& model, const ResponseMatrix& data, int64_t n_draws,
                            std::optional<double> memory_budget_mb) {
  const MemoryBudget budget = memory_budget_mb ? MemoryBudget{*memory_budget_mb, ""} : default_inference_budget();
  const double budget_mb = budget.mb;
  const int64_t persons = data.responses.size(0), items = data.responses.size(1);
  size_t longest_name = 0;
  for (const auto& name : data.item_names) longest_name = std::max(longest_name, name.size());
  const auto need_mb = [&](int64_t p, int64_t j, int64_t n) { return inference_memory_mb(model, p, j, n, longest_name); };
  if (need_mb(persons, items, n_draws) <= budget_mb) return;
  const std::string over = " need about " + format_whole_mb(need_mb(persons, items, n_draws)) +
                           ", more than infer's memory budget of " + format_whole_mb(budget_mb) +
                           (budget.what.empty() ? "" : " (" + budget.what + ")");
  constexpr int64_t kFewestDraws = 2;
  if (need_mb(persons, items, kFewestDraws) <= budget_mb) {
    const int64_t fitting = largest_fitting(kFewestDraws, n_draws, [&](int64_t n) { return need_mb(persons, items, n) <= budget_mb; });
    throw UserError("bfhpo infer: --draws " + std::to_string(n_draws) + ": " + std::to_string(items) + " items x " +
                    std::to_string(n_draws) + " draws" + over + ". Fix: --draws " + std::to_string(fitting) +
                    " or fewer");
  }
  const bool one_item_fits = need_mb(persons, 1, kFewestDraws) <= budget_mb;
  const std::string fix =
      one_item_fits
          ? "infer on at most " +
                std::to_string(largest_fitting(1, items, [&](int64_t j) { return need_mb(persons, j, n_draws) <= budget_mb; })) +
                " items at a time: split the columns into several files"
          : "infer on fewer persons at a time: split the rows into several files";
  throw UserError(data.source + ": " + std::to_string(persons) + " persons x " + std::to_string(items) + " items" +
                  over + " (the summary network's attention across items grows with the square of their number). "
                  "Fix: " + fix);
}

PosteriorDraws infer_posterior(TrainedModel& model, const ResponseMatrix& data, int64_t n_draws, uint64_t seed,
                               std::optional<double> memory_budget_mb, ShapeSpreads* spreads) {
  if (n_draws < 2) throw UserError("bfhpo infer: --draws must be at least 2. Fix: give --draws 1000");
  check_inference_memory(model, data, n_draws, memory_budget_mb);
  PosteriorDraws out;
  out.item_names = data.item_names;
  out.seed = seed;
  const auto item_model = models::make_item_response_model(model.config.simulator);
  out.parameter_names = item_model->parameter_names();
  const auto& simulator = model.config.simulator;
  warn_outside(out.warnings, "items", data.responses.size(1), simulator.ranges.min_items, simulator.ranges.max_items);
  warn_outside(out.warnings, "persons", data.responses.size(0), simulator.ranges.min_persons,
               simulator.ranges.max_persons);
  const double missing_share = 1.0 - data.mask.mean().item<double>();
  // 5 points of slack: a trained rate r shows as r plus sampling noise in the data.
  constexpr double kMissingSlack = 0.05;
  if (missing_share < simulator.missing.low - kMissingSlack || missing_share > simulator.missing.high + kMissingSlack)
    out.warnings.push_back(percent(missing_share) + " of the cells missing, outside the " +
                           percent(simulator.missing.low) + " to " + percent(simulator.missing.high) +
                           " the model trained on: the posterior is extrapolated");
  const auto answered = data.mask.sum(0);
  for (size_t j = 0; j < data.item_names.size(); ++j)
    if (answered[static_cast<int64_t>(j)].item<double>() == 0.0)
      out.warnings.push_back("item '" + data.item_names[j] + "' has no response: its posterior is the estimator's "
                             "guess from the other items alone");
  torch::NoGradGuard no_grad;
  const auto responses = data.responses.unsqueeze(0);
  const auto mask = data.mask.unsqueeze(0);
  // A generator of its own, seeded as torch::manual_seed(seed) seeds the global one: data sets inferred side
  // by side draw what each would alone.
  const auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  if (model.spread) {
    out.spread = *model.spread;
  } else {
    // At the missing share to the percent: data sets a hair apart share one.
    const int64_t persons = data.responses.size(0), items = data.responses.size(1);
    const double missing = std::round(missing_share * 100.0) / 100.0;
    ShapeSpreads once;
    const auto calibration_draws = static_cast<uint64_t>(std::min(n_draws, kMostSpreadDraws));
    out.spread = *(spreads ? *spreads : once).get({persons, items, missing, calibration_draws}, [&] {
      return spread_at_shape(model, persons, items, missing, n_draws);
    });
  }
  // The summary network once: every round of draws conditions on it, and the summary-space check reads it.
  const auto summary = model.approximator->summarize(responses, mask);
  out.summary = summary.global[0];
  const auto with_log_q = draws_in_support(*model.approximator, *item_model, summary, n_draws, data.item_names,
                                           out.spread, out.spread_center, out.warnings, generator);
  const int64_t dim = with_log_q.size(2) - 1;
  out.draws = with_log_q.narrow(2, 0, dim).contiguous();
  out.log_prob = with_log_q.select(2, dim).contiguous();  // the flow's own, from the pass that drew them
  return out;
}

torch::Tensor amortized_log_prob(TrainedModel& model, const ResponseMatrix& data, const torch::Tensor& draws,
                                 const PosteriorDraws& amortized) {
  torch::NoGradGuard no_grad;
  const auto flow_draws = amortized.spread.invert(draws, amortized.spread_center);
  return model.approximator->log_prob(flow_draws.unsqueeze(0), data.responses.unsqueeze(0), data.mask.unsqueeze(0))[0] -
         amortized.spread.log_scale_sum();
}

json PosteriorDraws::summary_json() const {
  json items = json::array();
  for (size_t j = 0; j < item_names.size(); ++j) {
    json item{{"item", item_names[j]}};
    for (const auto& parameter : reported_parameters(parameter_names)) {
      const Summary s = summarize(parameter_draws(draws, parameter_names, static_cast<int64_t>(j), parameter));
      item[parameter] = {{"mean", s.mean}, {"sd", s.sd}, {"q2.5", s.q025}, {"q50", s.q50}, {"q97.5", s.q975}};
    }
    items.push_back(item);
  }
  return {{"draws", draws.size(1)},
          {"seed", seed},
          {"spread_calibration", spread.to_json(parameter_names)},
          {"warnings", warnings},
          {"items", items}};
}

std::string PosteriorDraws::summary_csv() const {
  std::ostringstream out;
  out << std::setprecision(10) << "item,parameter,mean,sd,q2.5,q50,q97.5\n";
  for (size_t j = 0; j < item_names.size(); ++j)
    for (const auto& parameter : reported_parameters(parameter_names)) {
      const Summary s = summarize(parameter_draws(draws, parameter_names, static_cast<int64_t>(j), parameter));
      out << csv_field(item_names[j]) << "," << parameter << "," << s.mean << "," << s.sd << "," << s.q025 << "," << s.q50
          << "," << s.q975 << "\n";
    }
  return out.str();
}

std::string PosteriorDraws::draws_csv() const {
  std::string out = "item,draw";
  for (const auto& name : parameter_names) out += "," + name;
  out += ",log_prob\n";
  const auto d_tensor = draws.contiguous();
  const auto lp_tensor = log_prob.contiguous();
  const auto d = d_tensor.accessor<float, 3>();
  const auto lp = lp_tensor.accessor<float, 2>();
  for (int64_t j = 0; j < d.size(0); ++j)
    for (int64_t k = 0; k < d.size(1); ++k) {
      out += csv_field(item_names[static_cast<size_t>(j)]) + "," + std::to_string(k);
      for (int64_t p = 0; p < d.size(2); ++p) {
        out += ',';
        append_number(out, d[j][k][p], 9);
      }
      out += ',';
      append_number(out, lp[j][k], 9);
      out += '\n';
    }
  return out;
}

}  // namespace bfhpo::inference
