#include "trials/export.hpp"

#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "hpo/study_report.hpp"
#include "hpo/trial_attrs.hpp"
#include "models/simulators/simulator_spec.hpp"
#include "report/memory_frontier.hpp"
#include "trials/reproduction.hpp"
#include "trials/trial_config.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

// The configuration the best trial trained with: study values, its params,
// its seed, and the memory configuration the gate, probe or OOM ladder settled on.
TrialConfig trained_config(const hpo::StudySpec& spec, const hpo::FrozenTrial& trial, const json& best) {
  TrialConfig config = make_trial_config(spec, best["params"], spec.source.string());
  config.training.seed = best["trained_with"]["seed"].get<uint64_t>();
  if (const auto batch_size = hpo::integer_attr(trial, "bfhpo:batch_size")) config.training.batch_size = *batch_size;
  const auto chunk_attr = [&](const std::string& key, std::optional<int64_t>& chunk) {
    if (trial.system_attrs.contains(key) && trial.system_attrs[key].is_null())
      chunk = std::nullopt;
    else if (const auto size = hpo::integer_attr(trial, key))
      chunk = *size;
  };
  chunk_attr("bfhpo:item_chunk_size", config.approximator.memory.item_chunk_size);
  chunk_attr("bfhpo:person_chunk_size", config.approximator.memory.person_chunk_size);
  if (const auto checkpointing = hpo::boolean_attr(trial, "bfhpo:gradient_checkpointing"))
    config.approximator.memory.gradient_checkpointing = *checkpointing;
  return config;
}

json repeated(int64_t width, int64_t depth) { return json(std::vector<int64_t>(static_cast<size_t>(depth), width)); }

// The best trial, or with a budget the best whose peak fits it; by the
// ranked objective (report/trial_facts.hpp) in a study of several.
const hpo::FrozenTrial& chosen_trial(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                                     std::optional<double> budget_mb) {
  if (!budget_mb) {
    if (const auto best = report::ranked_best(spec, trials)) return trials.at(static_cast<size_t>(best->number));
    throw hpo::no_best_trial_error(spec, trials);
  }
  const auto candidates = report::frontier_candidates(report::trial_facts(trials, report::ranked_objective(spec)));
  if (const auto best = report::best_within(candidates, report::ranked_direction(spec), *budget_mb))
    return trials.at(static_cast<size_t>(best->number));
  const std::string source = spec.source.string();
  if (!report::ranked_best(spec, trials)) throw hpo::no_best_trial_error(spec, trials);
  if (candidates.empty())
    throw UserError::at(source, "", "--budget-mb: no COMPLETE trial records a peak",
                        "finish a trial of this training study first, or leave out --budget-mb");
  const auto smallest = std::min_element(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.peak_mb < b.peak_mb;
  });
  throw UserError::at(source, "", "--budget-mb " + format_number(*budget_mb) + ": no COMPLETE trial fits (the smallest peak is trial " +
                                      std::to_string(smallest->number) + "'s, " + format_mb(smallest->peak_mb) + ")",
                      "give a budget of at least " + format_mb(smallest->peak_mb) +
                          ", or run trials with smaller memory (memory.budget_mb)");
}

}  // namespace

json best_configuration_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                             std::optional<double> budget_mb) {
  const hpo::FrozenTrial& trial = chosen_trial(spec, trials, budget_mb);
  json best = hpo::trial_summary_json(spec, trial);
  best["system_attrs"] = trial.system_attrs;
  best["trained_with"] = trained_with(trial, trial_seed(spec.seed, trial.number)).to_json();
  best["config"] = trained_config(spec, trial, best).to_json();
  const auto weights = hpo::string_attr(trial, "bfhpo:weights");
  best["weights"] = weights ? json(*weights) : json();
  return best;
}

json bayesflow_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                    std::optional<double> budget_mb) {
  const json best = best_configuration_json(spec, trials, budget_mb);
  const TrialConfig config = trained_config(spec, trials.at(best["trial"].get<size_t>()), best);
  const auto& s = config.approximator.summary;
  const auto& f = config.approximator.flow;
  const auto& t = config.training;
  const json activation = config.to_json()["approximator"]["summary"]["activation"];
  const int64_t total_steps = t.total_steps();
  const auto warmup_steps = static_cast<int64_t>(std::ceil(t.warmup_fraction * static_cast<double>(total_steps)));
  json out;
  out["bfhpo"] = {{"study", spec.name}, {"trial", best["trial"]}, {"value", best["value"]}, {"weights", best["weights"]}};
  out["bayesflow_version"] = "2.1";
  // BayesFlow approximates one parameter vector per data set; the closest to
  // bfhpo's per-item posterior is one item's column as the data set: its
  // cells (a set over persons) through a DeepSet, the item's parameters through the flow.
  out["adapter"] = {{"method", "bayesflow.approximators.ContinuousApproximator.build_adapter"},
                    {"kwargs",
                     {{"inference_variables", models::item_parameter_names(config.simulator)},
                      {"summary_variables", json::array({"item_cells"})}}}};
  if (config.approximator.summary.item_fit) out["adapter"]["kwargs"]["inference_conditions"] = json::array({"item_fit"});
  out["summary_network"] = {{"class", "bayesflow.networks.DeepSet"},
                            {"kwargs",
                             {{"summary_dim", s.embed_dim},
                              {"depth", 1},
                              {"mlp_widths_equivariant", repeated(s.cell_mlp_width, s.cell_mlp_depth)},
                              {"mlp_widths_invariant_inner", repeated(s.cell_mlp_width, s.cell_mlp_depth)},
                              {"mlp_widths_invariant_outer", json::array({s.cell_dim})},
                              {"mlp_widths_invariant_last", json::array({s.cell_dim})},
                              {"inner_pooling", "mean"},
                              {"output_pooling", "mean"},
                              {"activation", activation},
                              {"dropout", s.dropout}}}};
  out["inference_network"] = {
      {"class", "bayesflow.networks.CouplingFlow"},
      {"kwargs",
       {{"depth", f.depth},
        {"transform", "affine"},
        {"permutation", "random"},
        {"use_actnorm", true},
        {"subnet_kwargs",
         {{"widths", repeated(f.subnet_width, f.subnet_depth)},
          {"activation", config.to_json()["approximator"]["flow"]["activation"]},
          {"residual", false},
          {"dropout", f.dropout}}},
        {"transform_kwargs", {{"clamp", true}}}}}};
  out["approximator"] = {{"class", "bayesflow.approximators.ContinuousApproximator"},
                         {"kwargs", {{"standardize", "inference_variables"}}}};
  out["training"] = {
      {"method", "bayesflow.BasicWorkflow.fit_online"},
      {"kwargs", {{"epochs", t.epochs}, {"num_batches_per_epoch", t.num_batches}, {"batch_size", t.batch_size}}},
      {"optimizer",
       {{"class", "keras.optimizers.Adam"},
        {"clipnorm", t.clip_grad_norm > 0 ? json(t.clip_grad_norm) : json()},
        {"learning_rate",
         {{"class", "keras.optimizers.schedules.CosineDecay"},
          {"kwargs",
           {{"initial_learning_rate", 0.0},
            {"warmup_target", t.learning_rate},
            {"warmup_steps", warmup_steps},
            {"decay_steps", total_steps - warmup_steps}}}}}}}};
  json notes = json::array(
      {"bfhpo's flow is per item: q(theta_j | item context, global summary) over every item of a data set. "
       "BayesFlow's ContinuousApproximator models one vector per data set, so here each item is a data set: "
       "item_cells is that item's column as a set over persons, with the features bfhpo computes per cell "
       "(the indicators y_pj >= k for k = 1..K-1, the person's score, the item's p-value, the scaled response "
       "minus the person's score, the person's and the item's answered shares, the person's rest score "
       "standardized over the item's persons and its product with the response minus the p-value, and "
       "log(persons who answered the item) / log(1000); every feature "
       "0 on a missing "
       "cell, and the mean over persons taken over the persons who answered), which the simulator must provide.",
       "Not carried over: bfhpo's SetTransformer across items (" + std::to_string(s.attention_layers) +
           " self-attention layers of width " + std::to_string(s.embed_dim) + ", " +
           std::to_string(s.attention_heads) +
           " heads) and its global summary (width " + std::to_string(s.summary_dim) +
           ") appended to every item's context. Closest: a custom SummaryNetwork over the whole matrix that "
           "returns one context per item; BayesFlow's SetTransformer pools to one vector per data set.",
       "bfhpo's summary is one phi MLP per cell, a mean over persons and a linear map to embed_dim; a DeepSet "
       "of depth 1 is the smallest BayesFlow DeepSet and adds an equivariant stage bfhpo does not have.",
       "bfhpo soft-clamps log-scales as c * 2/pi * atan(s / c) with c = " + json(f.clamp).dump() +
           "; BayesFlow's AffineTransform takes clamp as a bool (a fixed arcsinh soft clamp), so the value does "
           "not carry over.",
       "bfhpo's MLPs are plain (no residual connections, no norm), hence residual=false; its initialisation "
       "(LibTorch defaults, zero-initialised coupling outputs) is not BayesFlow's.",
       "bfhpo standardizes the inference variables with running statistics, as standardize="
       "\"inference_variables\" does."});
  if (config.approximator.summary.item_fit) {
    notes.push_back(
        "item_fit is each item's logistic curve fitted to the data set by marginal maximum likelihood (log a, "
        "then the K-1 difficulties; EM on 21 nodes, models/networks/item_fit.hpp), which the simulator must "
        "provide: bfhpo appends it to the item's pooled cells and to the flow's condition, BayesFlow's adapter "
        "passes inference_conditions to the inference network beside the summary.");
  }
  if (config.approximator.calibration.enabled) {
    const auto& c = config.approximator.calibration;
    notes.push_back("Not carried over: the calibration penalty (Falkiewicz et al. 2023), weight " +
                    json(c.weight).dump() + " with " + std::to_string(c.n_post_samples) +
                    " posterior samples; BayesFlow 2.1's ContinuousApproximator has no such loss term.");
  }
  out["notes"] = notes;
  out["simulator"] = config.to_json()["simulator"];
  return out;
}

}  // namespace bfhpo::trials
