// `bfhpo infer`: the trained approximator applied to a real response matrix.
//
// load_trained_model takes either a folder that `bfhpo train` wrote
// (config.json + weights.pt) or a training study file (its best trial's
// configuration and weights, as `export --best` names them). infer_posterior
// draws n posterior draws of every item's parameters (the model's, e.g.
// (log a_j, b_j) for the 2PL) on the CPU in eval mode, given the responses
// and their mask (missing cells). The draws come from a generator of their
// own seeded with `seed`, so the same data, model and seed give the same
// draws whatever runs beside them, and the model's TorchScript module
// (models/torchscript_module.hpp) gives them too after torch.manual_seed(seed). The posterior lives where the
// prior does, so a flow draw outside the prior's support (GRM thresholds out
// of order: ItemResponseModel::log_prior is -inf) is dropped and the item's
// next draws inside it are kept (the flow's density truncated to the
// support); the TorchScript module returns the flow's draws unfiltered. Each
// draw's log q(theta | responses) (the untruncated flow's) comes with it.
// The flow's draws are first mapped by the spread calibration
// (inference/posterior_spread.hpp: each parameter's spread scaled about the
// item's mean so that the flow's 80% intervals hold 80% of the truths of
// data sets simulated at the data's shape, spread_at_shape.hpp;
// TrainedModel::spread when set), and
// log q is the mapped density; the TorchScript module gives the flow's own
// draws, unmapped.
// A data set with more or fewer items or persons than the model trained on,
// or a share of missing cells more than 5 points outside its trained rates,
// is inferred all the same, with a warning naming the trained range.
//
// Nothing is allocated before the memory a data set and a number of draws
// need (inference_memory_mb) is checked against infer's budget: the summary
// network grows with persons x items and, through the attention across
// items, with items squared; the draws, their log q and their CSV with items
// x draws. Over it, a UserError says how many draws, or items, would fit.
// Weights that LibTorch cannot read, or that are not those of the
// configuration beside them, are UserErrors naming the weights file.
#pragma once

#include "models/approximator.hpp"
#include "inference/posterior_spread.hpp"
#include "inference/response_matrix.hpp"
#include "inference/shape_cache.hpp"
#include "trials/trial_config.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct TrainedModel {
  trials::TrialConfig config;
  std::shared_ptr<models::ContinuousApproximatorImpl> approximator;  // eval mode, CPU, unchunked
  std::filesystem::path weights;
  // Its files (configuration, training result, journal, weights): no output of infer replaces them.
  std::vector<std::filesystem::path> files;
  // The spread calibration infer applies; none: measured at each data set's shape (spread_at_shape.hpp).
  std::optional<PosteriorSpread> spread;
};

// `storage_override`: the study's storage instead of its file's "storage" (the CLI's --storage).
TrainedModel load_trained_model(const std::filesystem::path& model_dir_or_study,
                                const std::optional<std::string>& storage_override = std::nullopt);

// The responses `model` reads: its categories, and missing cells when it trained on them.
ResponseFormat response_format(const TrainedModel& model);

struct PosteriorDraws {
  std::vector<std::string> item_names;
  std::vector<std::string> parameter_names;  // the model's, e.g. {"log_a", "b"}
  torch::Tensor draws;     // [J, n, D] float32, in parameter_names' order
  torch::Tensor log_prob;  // [J, n] float32: log q(draw | responses)
  PosteriorSpread spread;        // the map from the flow's draws to these
  torch::Tensor spread_center;  // [J, D]: the point it scales about, the item's mean of the flow's first draws
  uint64_t seed = 0;
  // The summary network's global summary of the data [summary_dim], from the pass the draws conditioned on
  // (the summary-space check reads it); undefined for draws that did not come from the flow.
  torch::Tensor summary;
  std::vector<std::string> warnings;

  // Per item: mean, sd and 2.5/50/97.5% quantiles (linear interpolation
  // between order statistics) of every parameter, and of a_j = exp(log a_j)
  // when the model has log_a.
  nlohmann::json summary_json() const;
  // The same as CSV: item,parameter,mean,sd,q2.5,q50,q97.5 (rows by item, then a, log_a, b, ...).
  // An item's name is quoted as RFC 4180 does (common/csv_field.hpp), here and in draws_csv.
  std::string summary_csv() const;
  // Every draw: item,draw,<parameters>,log_prob with 9 significant digits (float32 round-trips).
  std::string draws_csv() const;
};

// At most the memory, in MB, that infer_posterior and the CSV of its draws
// hold at once, with the draws' grid posteriors (DrawAbilityTable, where it
// fits), for `persons` x `items` responses and `draws` draws per item whose
// longest item name has `longest_item_name` bytes (an upper bound).
double inference_memory_mb(const TrainedModel& model, int64_t persons, int64_t items, int64_t draws,
                           size_t longest_item_name);
// infer's and init's memory budget when none is given: 0.9 of the machine's
// memory, as the study setting memory.budget_mb "auto" is on the CPU, and
// no more than the address space the process may still map under a limit
// (ulimit -v, RLIMIT_AS), where an allocation past it fails.
struct MemoryBudget {
  double mb = 0.0;
  std::string what;  // in messages: "0.9 of this machine's memory", "the address space left under ulimit -v"
};
MemoryBudget default_inference_budget();
// A UserError when inference_memory_mb exceeds the budget (none: the default
// one), naming the data file and the largest --draws, or number of items, that fits.
void check_inference_memory(const TrainedModel& model, const ResponseMatrix& data, int64_t n_draws,
                            std::optional<double> memory_budget_mb = std::nullopt);

// check_inference_memory, then the draws. `spreads`: where to keep and find the spread calibration of the
// data's shape (none: computed for this call only).
PosteriorDraws infer_posterior(TrainedModel& model, const ResponseMatrix& data, int64_t n_draws, uint64_t seed,
                               std::optional<double> memory_budget_mb = std::nullopt,
                               ShapeCache<PosteriorSpread>* spreads = nullptr);

// log q(draws | data) under the amortized posterior `amortized` came from (its
// spread calibration inverted), draws [J, n, D] float32: [J, n].
torch::Tensor amortized_log_prob(TrainedModel& model, const ResponseMatrix& data, const torch::Tensor& draws,
                                 const PosteriorDraws& amortized);

}  // namespace bfhpo::inference
