#include "trials/export.hpp"

#include "hpo/study_report.hpp"
#include "trials/reproduction.hpp"
#include "trials/trial_config.hpp"

#include <cmath>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

// The configuration the best trial trained with: study values, its params,
// its seed, and the memory configuration the gate, probe or OOM ladder settled on.
TrialConfig trained_config(const hpo::StudySpec& spec, const json& best) {
  TrialConfig config = make_trial_config(spec, best["params"], spec.source.string());
  config.training.seed = best["trained_with"]["seed"].get<uint64_t>();
  const json& attrs = best["system_attrs"];
  if (attrs.contains("bfhpo:batch_size")) config.training.batch_size = attrs["bfhpo:batch_size"].get<int64_t>();
  if (attrs.contains("bfhpo:item_chunk_size")) {
    const json& chunk = attrs["bfhpo:item_chunk_size"];
    config.approximator.memory.item_chunk_size =
        chunk.is_null() ? std::nullopt : std::optional<int64_t>(chunk.get<int64_t>());
  }
  if (attrs.contains("bfhpo:gradient_checkpointing"))
    config.approximator.memory.gradient_checkpointing = attrs["bfhpo:gradient_checkpointing"].get<bool>();
  return config;
}

json repeated(int64_t width, int64_t depth) { return json(std::vector<int64_t>(static_cast<size_t>(depth), width)); }

}  // namespace

json best_configuration_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials) {
  json best = hpo::best_trial_json(spec, trials);
  const hpo::FrozenTrial& trial = trials.at(best["trial"].get<size_t>());
  best["system_attrs"] = trial.system_attrs;
  best["trained_with"] = trained_with(trial, trial_seed(spec.seed, trial.number)).to_json();
  best["config"] = trained_config(spec, best).to_json();
  best["weights"] = trial.system_attrs.value("bfhpo:weights", json());
  return best;
}

json bayesflow_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials) {
  const json best = best_configuration_json(spec, trials);
  const TrialConfig config = trained_config(spec, best);
  const auto& s = config.approximator.summary;
  const auto& f = config.approximator.flow;
  const auto& t = config.training;
  const json activation = config.to_json()["approximator"]["summary"]["activation"];
  const int total_steps = t.epochs * t.num_batches;
  const int warmup_steps = static_cast<int>(std::ceil(t.warmup_fraction * total_steps));
  json out;
  out["bfhpo"] = {{"study", spec.name}, {"trial", best["trial"]}, {"value", best["value"]}, {"weights", best["weights"]}};
  // responses [B, P, J]: a DeepSet over persons for every item, then a
  // SetTransformer across the items (BayesFlow composes them as a
  // hierarchical summary network).
  out["summary_network"] = {
      {"persons_stage",
       {{"class", "bayesflow.networks.DeepSet"},
        {"kwargs",
         {{"summary_dim", s.embed_dim},
          {"mlp_widths_equivariant", repeated(s.cell_mlp_width, s.cell_mlp_depth)},
          {"mlp_widths_invariant_inner", repeated(s.cell_mlp_width, s.cell_mlp_depth)},
          {"mlp_widths_invariant_outer", json::array({s.cell_dim})},
          {"activation", activation},
          {"dropout", s.dropout}}}}},
      {"items_stage",
       {{"class", "bayesflow.networks.SetTransformer"},
        {"kwargs",
         {{"summary_dim", s.summary_dim},
          {"embed_dims", repeated(s.embed_dim, s.attention_layers)},
          {"num_heads", repeated(s.attention_heads, s.attention_layers)},
          {"mlp_depths", repeated(1, s.attention_layers)},
          {"mlp_widths", repeated(s.embed_dim, s.attention_layers)},
          {"dropout", s.dropout}}}}}};
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
          {"dropout", f.dropout}}},
        {"transform_kwargs", {{"clamp", f.clamp}}}}}};
  out["approximator"] = {{"class", "bayesflow.ContinuousApproximator"},
                         {"standardize", "inference_variables"},
                         {"inference_variables", json::array({"log_a", "b"})},
                         {"summary_variables", json::array({"responses"})}};
  if (config.approximator.calibration.enabled) {
    const auto& c = config.approximator.calibration;
    out["calibration"] = {{"method", "Falkiewicz et al. 2023, differentiable coverage"},
                          {"weight", c.weight},
                          {"n_post_samples", c.n_post_samples},
                          {"conservative", c.conservative},
                          {"ste_temperature", c.ste_temperature}};
  }
  out["training"] = {
      {"fit_kwargs", {{"epochs", t.epochs}, {"num_batches", t.num_batches}, {"batch_size", t.batch_size}}},
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
  out["simulator"] = config.to_json()["simulator"];
  return out;
}

}  // namespace bfhpo::trials
