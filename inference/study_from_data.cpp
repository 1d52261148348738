#include "inference/study_from_data.hpp"

#include "common/config_reader.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "models/simulators/item_response_model.hpp"
#include "inference/item_estimates.hpp"
#include "inference/user_prior.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace bfhpo::inference {
namespace {

using nlohmann::ordered_json;

// Training shape of every drafted study: steps per epoch, simulated data
// sets per step and in the validation set.
constexpr int64_t kStepsPerEpoch = 250;
constexpr int64_t kBatchSize = 32;
constexpr int64_t kValidationSims = 64;
constexpr double kLearningRate = 5e-4;

// CPU seconds of one training step of the drafted network (one thread), in
// the cells a step simulates and reads (batch x items x persons): linear,
// about a microsecond a cell. `bfhpo train` of init's network, 2 and 6 steps
// of 32 data sets, the difference over 4 steps (user + sys, 2-core machine
// at load 1.5): 2PL 200 x 16 (102,400 cells) 0.115 s; 1,248 x 16 (639,000)
// 0.90 s; 2,000 x 50 (3.2 M) 4.7 s; 3,570 x 57 (6.5 M, item chunk 1
// checkpointed) 7.3 s; a GRM with K = 6 on 300 x 5, 0.11 s, is 1.5 times a
// binary model's cell cost: K - 1 features and thresholds a cell.
// The item fit (models/networks/item_fit.hpp) adds about 0.2 us a cell and
// category: 20 EM rounds over each cell's K categories at 21 nodes. The
// same runs with the fit, 5,000 and 2,500 steps beside another training:
// GRM K = 7 on 576 x 5 0.21 s a step (0.09 without), 2PL 474 x 24 0.54 s
// (0.35 without).
constexpr double kStepSeconds = 0.02;
constexpr double kCellSeconds = 1.1e-6;
constexpr double kCellSecondsPerExtraCategory = 0.125 * kCellSeconds;
constexpr double kItemFitSecondsPerCellCategory = 0.22e-6;

std::string join(const std::vector<int64_t>& values) {
  std::string text;
  for (const int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

std::string missing_percent(double share) {
  std::ostringstream out;
  out.precision(share < 0.1 ? 2 : 3);
  out << 100.0 * share << "%";
  return out.str();
}

bool is_binary_model(const std::string& model) { return model != "grm"; }

// The length of the UTF-8 sequence (RFC 3629: no overlong form, no surrogate, at most U+10FFFF) at
// text[i]; 0 when none starts there.
size_t utf8_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const auto in = [](unsigned value, unsigned low, unsigned high) { return value >= low && value <= high; };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  if (in(lead, 0xC2, 0xDF)) return in(byte(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (in(lead, 0xE0, 0xEF)) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    return in(byte(i + 1), low, high) && in(byte(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(lead, 0xF0, 0xF4)) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    return in(byte(i + 1), low, high) && in(byte(i + 2), 0x80, 0xBF) && in(byte(i + 3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// The study's name from the file's stem: every control character and every byte that starts no UTF-8
// sequence becomes "_", so that the study file can be written (JSON is UTF-8) and every verb takes it.
std::string study_name(const std::filesystem::path& data_file, const std::string& model) {
  const std::string stem = data_file.stem().string();
  std::string name;
  for (size_t i = 0; i < stem.size();) {
    const size_t length = utf8_sequence_length(stem, i);
    const auto lead = static_cast<unsigned char>(stem[i]);
    if (length == 0 || lead < 0x20 || lead == 0x7f) {
      name += '_';
      ++i;
      continue;
    }
    name.append(stem, i, length);
    i += length;
  }
  return name + "-" + model;
}

// Refuses a file that cannot serve `model` (see the header).
void check_serves(const ResponseSummary& data, const std::string& model, const std::string& file) {
  const int64_t items = data.n_items();
  if (items < 2)
    throw UserError(file + ": one item ('" + data.items.front().name +
                    "'); an item's parameters are told apart from the persons' abilities only through other "
                    "items. Fix: give the file every item of the test or scale (at least two item columns)");
  if (data.n_persons < items)
    throw UserError(file + ": " + std::to_string(data.n_persons) + " persons for " + std::to_string(items) +
                    " items; the " + model + " model needs at least as many persons as items to tell the items "
                    "apart. Fix: add persons (rows), or keep the items you need (columns)");
  for (const auto& item : data.items)
    if (item.answered == 0)
      throw UserError(file + ": item '" + item.name + "' has no response. Fix: drop its column");
  const std::vector<int64_t>& found = data.categories;
  std::vector<int64_t> absent;
  for (int64_t k = 0; k < found.back(); ++k)
    if (!std::binary_search(found.begin(), found.end(), k)) absent.push_back(k);
  if (!absent.empty()) {
    const bool shifted = found.front() == static_cast<int64_t>(absent.size());
    throw UserError(
        file + ": the responses are " + join(found) + "; a model's categories run 0..K-1 and " + join(absent) +
        (absent.size() == 1 ? " never occurs" : " never occur") + ". Fix: " +
        (shifted ? "subtract " + std::to_string(found.front()) + " from every response (" +
                       std::to_string(found.front()) + ".." + std::to_string(found.back()) + " becomes 0.." +
                       std::to_string(found.back() - found.front()) + ")"
                 : "recode the responses to consecutive categories 0..K-1 (renumber, or merge a category into a "
                   "neighbour)"));
  }
  const int64_t categories = static_cast<int64_t>(found.size());
  if (is_binary_model(model) && categories > 2)
    throw UserError(file + ": graded responses (0.." + std::to_string(categories - 1) + ") for the binary model " +
                    model + ". Fix: use --model grm, or dichotomise the responses to 0/1");
  if (!is_binary_model(model) && categories < 3)
    throw UserError(file + ": binary responses (0/1) for the graded model grm. Fix: use --model 2pl (or rasch, "
                    "3pl)");
  for (const auto& item : data.items)
    if (item.categories.size() == 1)
      throw UserError(file + ": item '" + item.name + "': every one of its " + std::to_string(item.answered) +
                      " responses is " + std::to_string(item.categories.front()) +
                      "; an item nobody answers differently tells nothing about its parameters. Fix: drop its "
                      "column");
}

// [count - margin, count + margin] with a margin of a fifth (at least one), not below `lowest`.
std::pair<int64_t, int64_t> range_around(int64_t count, int64_t lowest) {
  const int64_t margin = std::max<int64_t>(1, std::llround(0.2 * static_cast<double>(count)));
  return {std::max(lowest, count - margin), count + margin};
}

double floor_hundredth(double x) { return std::floor(100.0 * x + 1e-9) / 100.0; }
double ceil_hundredth(double x) { return std::ceil(100.0 * x - 1e-9) / 100.0; }

std::string minutes(double seconds) {
  if (seconds < 90) return std::to_string(std::lround(seconds)) + " s";
  if (seconds < 5400) return std::to_string(std::lround(seconds / 60)) + " min";
  return format_number(std::round(seconds / 360.0) / 10.0) + " h";
}

// Centres `prior` on the estimates (see the header); the choice says what and why.
StudyChoice center_log_a_prior(const std::vector<double>& estimates, models::NormalPrior& prior) {
  const auto n = static_cast<double>(estimates.size());
  double mean = 0.0, squares = 0.0;
  for (const double x : estimates) mean += x / n;
  for (const double x : estimates) squares += (x - mean) * (x - mean);
  const double spread = estimates.size() > 1 ? std::sqrt(squares / (n - 1.0)) : 0.0;
  const auto [lowest, highest] = std::minmax_element(estimates.begin(), estimates.end());
  const models::NormalPrior fallback = prior;
  // Within a quarter of the default's sd its centre serves as well: the default stays.
  if (std::abs(mean - fallback.mean) > 0.25 * fallback.sd) prior.mean = std::round(10.0 * mean) / 10.0;
  prior.sd = std::max(fallback.sd, std::ceil(10.0 * spread - 1e-9) / 10.0);
  const bool moved = prior.mean != fallback.mean || prior.sd != fallback.sd;
  return {"priors log_a N(" + format_number(prior.mean) + ", " + format_number(prior.sd) + ")",
          "the file's items have log a " + format_number(*lowest, 2) + " to " + format_number(*highest, 2) + " (a " +
              format_number(std::exp(*lowest), 2) + " to " + format_number(std::exp(*highest), 2) +
              ", each the mode of its posterior with the abilities integrated out); " +
              (moved ? "training draws discriminations around them, not in the tail of the default N(" +
                           format_number(fallback.mean) + ", " + format_number(fallback.sd) + ")"
                     : "the default prior covers them") +
              ". A reference fit (Stan) must use the same prior"};
}

ordered_json search_space() {
  return {{"training.learning_rate", {{"type", "float"}, {"low", 2e-4}, {"high", 2e-3}, {"log", true}}},
          {"summary.cell_mlp_width", {{"type", "int"}, {"low", 32}, {"high", 128}, {"log", true}}},
          {"summary.embed_dim", {{"type", "categorical"}, {"choices", {32, 64}}}},
          {"flow.depth", {{"type", "int"}, {"low", 4}, {"high", 8}}}};
}

// The study's network, weights and learning rate those of `estimator` (see draft_study).
void start_from(ordered_json& study, const ShippedEstimator& estimator) {
  const auto config = read_config_file(estimator.folder / "config.json", "shipped estimator's config");
  auto network = ordered_json::parse(config.at("approximator").dump());
  for (const char* decided_elsewhere : {"memory", "param_dim", "n_categories"}) network.erase(decided_elsewhere);
  study["approximator"] = network;
  study["training"]["learning_rate"] = kFineTuneLearningRate;
  study["training"]["initial_weights"] = std::filesystem::absolute(estimator.folder / "weights.pt").lexically_normal().string();
  study["search_space"] = {{"training.learning_rate", study["search_space"]["training.learning_rate"]}};
  study["search_space"]["training.learning_rate"]["low"] = kFineTuneLearningRate / 4.0;
  study["search_space"]["training.learning_rate"]["high"] = kFineTuneLearningRate * 4.0;
}

}  // namespace

double ResponseSummary::missing_share() const {
  int64_t answered = 0;
  for (const auto& item : items) answered += item.answered;
  return 1.0 - static_cast<double>(answered) / static_cast<double>(n_persons * n_items());
}

double ResponseSummary::largest_item_missing_share() const {
  int64_t fewest = n_persons;
  for (const auto& item : items) fewest = std::min(fewest, item.answered);
  return 1.0 - static_cast<double>(fewest) / static_cast<double>(n_persons);
}

ResponseSummary summarize_responses(const ResponseMatrix& data) {
  ResponseSummary summary;
  summary.n_persons = data.responses.size(0);
  const auto responses = data.responses.to(torch::kInt64).contiguous();
  const auto observed = data.mask.to(torch::kBool).contiguous();
  const int64_t* value = responses.data_ptr<int64_t>();
  const bool* answered = observed.data_ptr<bool>();
  const int64_t n_items = responses.size(1);
  std::set<int64_t> all;
  for (int64_t j = 0; j < n_items; ++j) {
    ItemResponses item;
    item.name = data.item_names[static_cast<size_t>(j)];
    std::set<int64_t> given;
    for (int64_t p = 0; p < summary.n_persons; ++p) {
      if (!answered[p * n_items + j]) continue;
      ++item.answered;
      given.insert(value[p * n_items + j]);
    }
    item.categories.assign(given.begin(), given.end());
    all.insert(given.begin(), given.end());
    summary.items.push_back(std::move(item));
  }
  summary.categories.assign(all.begin(), all.end());
  return summary;
}

ResponseFormat init_response_format(const std::string& model) {
  return {kMostCategories, true,
          is_binary_model(model) ? "0 or 1 (the " + model + " model's responses)"
                                 : "an integer 0..K-1 (a graded model's K categories, lowest 0; K at most " +
                                       std::to_string(kMostCategories) + ")"};
}

std::vector<double> estimate_log_a(const ResponseMatrix& data, const ResponseSummary& summary, const std::string& model,
                                   const std::filesystem::path& data_file,
                                   const std::function<void(const std::string&)>& say) {
  check_serves(summary, model, data_file.string());
  models::SimulatorSpec spec;
  spec.model = model;
  if (model == "grm") spec.n_categories = static_cast<int64_t>(summary.categories.size());
  const auto names = models::item_parameter_names(spec);
  if (names.front() != "log_a") return {};
  check_item_estimate_memory(data, spec.n_categories);
  if (summary.n_persons * summary.n_items() > kProgressCells)
    say("init: estimating each item's discrimination on " + std::to_string(summary.n_persons) + " persons x " +
        std::to_string(summary.n_items()) + " items (the mode of its marginal posterior, every ability integrated "
        "out: up to 200 L-BFGS iterations over every cell), for the prior of log a");
  const auto estimates = estimate_item_parameters(*models::make_item_response_model(spec), data).select(1, 0).contiguous();
  return {estimates.data_ptr<double>(), estimates.data_ptr<double>() + estimates.numel()};
}

std::optional<std::string> fresh_journal(const std::filesystem::path& study_file) {
  std::filesystem::path standard = study_file;
  standard += ".journal";
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(standard, error))) return std::nullopt;
  const std::string stem = study_file.stem().string();
  for (int n = 2;; ++n) {
    const std::string name = stem + "-" + std::to_string(n) + ".journal";
    if (!std::filesystem::exists(std::filesystem::symlink_status(study_file.parent_path() / name, error)))
      return name;
  }
}

int64_t training_steps(int64_t params_per_item) {
  return std::clamp<int64_t>(750 * params_per_item, 2500, 5000);
}

double expected_cpu_seconds(const models::SimulatorSpec& simulator, int64_t batch_size, int64_t steps) {
  const auto& r = simulator.ranges;
  const double items = 0.5 * static_cast<double>(r.min_items + r.max_items);
  const double persons = 0.5 * static_cast<double>(r.min_persons + r.max_persons);
  const double batch = static_cast<double>(batch_size);
  const double cells = batch * items * persons;
  const double extra_categories = static_cast<double>(std::max<int64_t>(simulator.n_categories - 2, 0));
  const double categories = static_cast<double>(simulator.n_categories);
  const double per_step = kStepSeconds +
                          (kCellSeconds + kCellSecondsPerExtraCategory * extra_categories +
                           kItemFitSecondsPerCellCategory * categories) *
                              cells;
  return per_step * static_cast<double>(steps);
}

StudyDraft draft_study(const ResponseSummary& data, const std::string& model, const std::filesystem::path& data_file,
                       const std::vector<double>& log_a_estimates, const ShippedEstimator* fine_tune) {
  if (data.items.empty() || data.categories.empty())
    throw std::invalid_argument("draft_study: a summary without items or responses");
  const std::string file = data_file.string();
  check_serves(data, model, file);
  StudyDraft draft;
  const auto choose = [&](const std::string& what, const std::string& why) { draft.choices.push_back({what, why}); };

  models::SimulatorSpec simulator;
  simulator.model = model;
  const int64_t categories = static_cast<int64_t>(data.categories.size());
  if (model == "grm") {
    simulator.n_categories = categories;
    choose("n_categories " + std::to_string(categories),
           "the responses run 0.." + std::to_string(categories - 1) + " (" + std::to_string(data.n_items()) +
               " items)");
  }
  const auto [min_items, max_items] = range_around(data.n_items(), 2);
  simulator.ranges.min_items = min_items;
  simulator.ranges.max_items = max_items;
  choose("n_items [" + std::to_string(min_items) + ", " + std::to_string(max_items) + "]",
         "the file has " + std::to_string(data.n_items()) +
             " items; training sees that many and a fifth fewer or more (an item dropped or added later)");
  const auto [min_persons, max_persons] = range_around(data.n_persons, 2);
  simulator.ranges.min_persons = min_persons;
  simulator.ranges.max_persons = max_persons;
  choose("n_persons [" + std::to_string(min_persons) + ", " + std::to_string(max_persons) + "]",
         "the file has " + std::to_string(data.n_persons) +
             " persons; the posterior's width depends on them, so training sees about as many");
  const double missing = data.missing_share();
  if (missing > 0) {
    const double largest = data.largest_item_missing_share();
    simulator.missing.low = floor_hundredth(0.5 * missing);
    simulator.missing.high = std::min(kMostMissing, ceil_hundredth(std::max({1.5 * missing, missing + 0.05, largest})));
    const std::string range = "[" + format_number(simulator.missing.low) + ", " + format_number(simulator.missing.high) + "]";
    const std::string beyond =
        missing > kMostMissing ? "the file's share itself lies beyond it, so its posterior is extrapolated from "
                                 "sparser training data (dropping the persons or items with the fewest responses "
                                 "brings it within)"
        : largest > kMostMissing ? "the shares of the items missing more lie beyond it"
                                 : "";
    choose("missing " + range,
           missing_percent(missing) + " of the cells are empty (at most " + missing_percent(largest) +
               " of one item's); training masks a share drawn from this range, " +
               (beyond.empty() ? std::string("so the file's empty cells are read as missing")
                               : "capped at " + format_number(kMostMissing) + ", the most it trains on; " + beyond));
  } else {
    choose("missing 0", "every cell holds a response");
  }

  if (!log_a_estimates.empty())
    draft.choices.push_back(center_log_a_prior(log_a_estimates, simulator.priors.log_a));

  const int64_t params_per_item = static_cast<int64_t>(models::item_parameter_names(simulator).size());
  const int64_t steps = training_steps(params_per_item);
  const int64_t fresh_epochs = (steps + kStepsPerEpoch - 1) / kStepsPerEpoch;
  const int64_t epochs = fine_tune ? (fresh_epochs + kFineTuneShare - 1) / kFineTuneShare : fresh_epochs;
  const double seconds = expected_cpu_seconds(simulator, kBatchSize, epochs * kStepsPerEpoch);
  choose("training " + std::to_string(epochs) + " epochs x " + std::to_string(kStepsPerEpoch) + " steps of " +
             std::to_string(kBatchSize) + " data sets",
         std::to_string(params_per_item) + (params_per_item == 1 ? " parameter" : " parameters") + " per item" +
             (fine_tune ? ", from a trained network: a " + std::to_string(kFineTuneShare) + "th of the " +
                              std::to_string(fresh_epochs) + " a fresh one gets"
                        : std::string()) +
             "; expect about " + minutes(seconds) +
             " of CPU time for `bfhpo train` (on two cores, each step's batch in two parts, a 2PL's steps take "
             "about 0.7 of that in wall time, a graded model's 0.9; a GPU takes a fraction), " +
             "and as much for each trial of `bfhpo optimize`");
  choose("memory budget \"auto\"", "90% of the device's memory; the memory gate and the OOM ladder work within it");

  const nlohmann::json simulator_json = simulator.to_json();
  ordered_json simulator_out = {{"model", model}};
  if (model == "grm") simulator_out["n_categories"] = simulator.n_categories;
  for (const char* key : {"n_items", "n_persons", "missing", "priors"})
    simulator_out[key] = ordered_json::parse(simulator_json[key].dump());
  if (!simulator.missing.any()) simulator_out.erase("missing");

  const int64_t warmup = std::max<int64_t>(1, epochs / 4);
  ordered_json& study = draft.study;
  study["name"] = study_name(data_file, model);
  study["direction"] = "minimize";
  study["n_trials"] = 20;
  study["seed"] = 1;
  study["sampler"] = {{"type", "tpe"}};
  study["pruner"] = {{"type", "median"}, {"n_startup_trials", 3}, {"n_warmup_steps", warmup}};
  study["simulator"] = simulator_out;
  study["training"] = {{"epochs", epochs},         {"num_batches", kStepsPerEpoch},
                       {"batch_size", kBatchSize}, {"learning_rate", kLearningRate},
                       {"validation_sims", kValidationSims}, {"device", "auto"}};
  study["approximator"] = {
      {"summary", {{"cell_mlp_width", 64}, {"embed_dim", 64}, {"attention_layers", 2}, {"item_fit", true}}},
      {"flow", {{"depth", 6}, {"subnet_width", 128}}}};
  study["memory"] = {{"budget_mb", "auto"}};
  study["objective"] = "val_nll";
  study["search_space"] = search_space();
  if (fine_tune) {
    start_from(study, *fine_tune);
    choose("training.initial_weights " + study["training"]["initial_weights"].get<std::string>(),
           "fine-tuning: training starts from the shipped " + fine_tune->name + " estimator (trained on " +
               ranges_text(fine_tune->simulator) + ", priors " + prior_text(fine_tune->simulator) +
               "), its network as it is, toward this file's ranges and priors, at learning rate " +
               format_number(kFineTuneLearningRate) + "; `bfhpo optimize` searches the learning rate only");
    return draft;
  }
  choose("summary.item_fit true",
         "the network reads each item's curve fitted to the data by marginal maximum likelihood besides the "
         "responses: on real data, which no model describes exactly, the posterior then follows the model's "
         "likelihood as Stan's does, where the responses' moments alone pull it away");
  choose("search space: learning rate [2e-4, 2e-3], cell MLP width [32, 128], embedding 32 or 64, flow depth 4-8",
         "`bfhpo train` trains the fixed values (inside these ranges); `bfhpo optimize` searches them, 20 trials, "
         "the median pruner stopping poor ones after " + std::to_string(warmup) + " epochs");
  return draft;
}

}  // namespace bfhpo::inference
