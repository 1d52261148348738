// `bfhpo init`: a training study sized to a real response file. The file is
// read as `bfhpo infer` reads it (inference/response_matrix.hpp) and measured
// (ResponseSummary); draft_study refuses a file that cannot serve the chosen
// model and otherwise writes a study that `bfhpo train` runs as it is (its
// fixed configuration) and `bfhpo optimize` searches (its search space):
//
//   simulator  the model; n_items and n_persons ranges around the file's
//              counts; K (n_categories) of a graded model from the categories
//              found; the missing-rate range around the file's missing share
//              and every item's (cells missing in the file are masked, as in
//              training)
//   priors     log a's normal prior centred on the file's items: the mean of
//              their estimated log a (inference/item_estimates.hpp), to a tenth,
//              where it lies over a quarter of the default's sd from the
//              default's mean, and an sd of at least the default's 0.5 and
//              the estimates' spread, so that training draws discriminations
//              where the file's lie rather than in the default prior's tail
//   training   a length from the model's parameters per item
//              (training_steps), stated with the CPU time it is expected
//              to take (expected_cpu_seconds)
//   network    summary.item_fit on (models/networks/item_fit.hpp)
//   memory     budget "auto"
//   search     learning rate and the network's widths and depth
//
// Each choice comes with one line saying what was chosen and why.
//
// Refused, as UserErrors naming the file, the item and the fix: one item,
// fewer persons than items, an item nobody answered, an item whose answers
// are all the same, categories that do not run 0..K-1 without a gap (1..5
// must be recoded 0..4), graded responses for a binary model and binary
// responses for "grm".
#pragma once

#include "models/simulators/simulator_spec.hpp"
#include "inference/response_matrix.hpp"
#include "inference/shipped_estimators.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::inference {

// The largest response a file read for `bfhpo init` may hold: a graded
// model's n_categories is at most 100.
constexpr int64_t kMostCategories = 100;

// The most missing cells a drafted study trains on: a file with more gets
// this and a line saying what lies beyond it.
constexpr double kMostMissing = 0.95;

// Files of more cells than this take the item estimates (estimate_log_a)
// long enough that init says what it does first.
constexpr int64_t kProgressCells = 100'000;

// How `bfhpo init` reads a file for `model`: any category up to
// kMostCategories (draft_study says what the model makes of them), missing
// cells allowed; a cell that is no response is refused saying what the
// model's file holds (0 or 1 for a binary model).
ResponseFormat init_response_format(const std::string& model);

struct ItemResponses {
  std::string name;
  int64_t answered = 0;            // persons with a response to the item
  std::vector<int64_t> categories; // the responses given, ascending
};

struct ResponseSummary {
  int64_t n_persons = 0;
  std::vector<ItemResponses> items;
  std::vector<int64_t> categories;  // every response in the file, ascending

  int64_t n_items() const { return static_cast<int64_t>(items.size()); }
  double missing_share() const;            // missing cells / all cells
  double largest_item_missing_share() const;
};

ResponseSummary summarize_responses(const ResponseMatrix& data);

// One line of `bfhpo init`'s output.
struct StudyChoice {
  std::string what;  // "n_items [13, 19]"
  std::string why;   // "the file has 16 items; ..."
};

struct StudyDraft {
  nlohmann::ordered_json study;    // the study file's content
  std::vector<StudyChoice> choices;
};

// `model` is one of models::model_names(); `data_file` names the file in
// messages and gives the study its name ("<file stem>-<model>", a control
// character or a byte that is not UTF-8 in the stem made "_": a name every
// verb takes).
// `log_a_estimates`: each item's estimated log a under `model`; empty for
// the Rasch model (no discrimination), or to keep the default prior.
// `fine_tune` (init --fine-tune, issue 41 part 5): the study starts from
// that shipped estimator (of `model`; for the graded model, of the file's
// categories): its network (approximator section) and weights
// (training.initial_weights), 1 / kFineTuneShare of the epochs a fresh
// network gets, at kFineTuneLearningRate, and a search space of the
// learning rate only (the weights fix the network). The simulator section,
// ranges and priors, is the file's, as without it.
inline constexpr int64_t kFineTuneShare = 4;
inline constexpr double kFineTuneLearningRate = 2e-4;
StudyDraft draft_study(const ResponseSummary& data, const std::string& model,
                       const std::filesystem::path& data_file, const std::vector<double>& log_a_estimates = {},
                       const ShippedEstimator* fine_tune = nullptr);

// Each item's log a under `model` with the default priors, estimated from
// the file (estimate_item_parameters); empty for the Rasch model. Refuses
// a file that cannot serve the model as draft_study does, and one whose
// estimate needs more memory than there is (check_item_estimate_memory),
// before the estimate. On a file of more than kProgressCells cells, `say`
// gets a line first saying what init does.
std::vector<double> estimate_log_a(const ResponseMatrix& data, const ResponseSummary& summary, const std::string& model,
                                   const std::filesystem::path& data_file,
                                   const std::function<void(const std::string&)>& say);

// The journal of a study written to `study_file`: none (its default,
// `<study_file>.journal`) when no file holds that path; else that journal
// holds an earlier study's trials, which the new one must not take as its
// own, and this is a fresh name beside it, `<stem>-N.journal` with the
// smallest N from 2 that no file holds, relative to the study's folder (as
// "storage" is read). The old journal is left as it is.
std::optional<std::string> fresh_journal(const std::filesystem::path& study_file);

// Training steps for a model with `params_per_item` parameters per item.
int64_t training_steps(int64_t params_per_item);

// The CPU seconds (one LibTorch thread) that `bfhpo train` of a draft
// study's fixed configuration is expected to take: simulation, the steps
// and validation, fitted to runs of such studies (study_from_data.cpp).
double expected_cpu_seconds(const models::SimulatorSpec& simulator, int64_t batch_size, int64_t steps);

}  // namespace bfhpo::inference
