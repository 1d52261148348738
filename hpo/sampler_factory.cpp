#include "hpo/sampler_factory.hpp"

#include "common/config_reader.hpp"
#include "hpo/random_sampler.hpp"
#include "hpo/tpe/tpe_sampler.hpp"

namespace bfhpo::hpo {
std::unique_ptr<Sampler> make_sampler(const StudySpec& spec) {
  ConfigSection section(spec.sampler, spec.source.string(), "sampler");
  if (section.choice("type", {"tpe", "random"}).value_or("tpe") == "random") {
    section.reject_unknown_keys();
    return std::make_unique<RandomSampler>();
  }
  // The preset gives every default; the other keys override it one by one.
  TpeOptions o = section.choice("preset", {"bfhpo", "optuna"}).value_or("bfhpo") == "optuna" ? optuna31_tpe_options()
                                                                                              : TpeOptions{};
  const auto set_from_choice = [&](const char* key, const std::vector<std::string>& choices, auto& field,
                                   auto first_choice_value, auto second_choice_value) {
    if (const auto choice = section.choice(key, choices))
      field = *choice == choices.front() ? first_choice_value : second_choice_value;
  };
  const auto set_flag = [&](const char* key, bool& field) {
    if (const auto flag = section.boolean(key)) field = *flag;
  };
  if (const auto n = section.int32("n_startup_trials", 0)) o.n_startup_trials = *n;
  if (const auto n = section.int32("n_ei_candidates", 1)) o.n_ei_candidates = *n;
  set_from_choice("startup", {"latin_hypercube", "random"}, o.startup, StartupDesign::LatinHypercube,
                  StartupDesign::Random);
  set_from_choice("bandwidth", {"spread", "optuna"}, o.bandwidth_from_spread, true, false);
  set_from_choice("weights", {"improvement", "optuna"}, o.below_weights, BelowWeights::Improvement,
                  BelowWeights::Optuna);
  set_from_choice("gamma", {"bfhpo", "optuna"}, o.gamma_share, 0.15, 0.1);
  set_flag("budget_aware", o.budget_aware);
  o.n_trials = spec.n_trials;
  set_flag("multivariate", o.multivariate);
  set_flag("group", o.group);
  set_flag("constant_liar", o.constant_liar);
  set_from_choice("liar_weight", {"batch", "optuna"}, o.liar_weights, LiarWeights::Batch, LiarWeights::Optuna);
  set_flag("consider_magic_clip", o.consider_magic_clip);
  set_flag("consider_endpoints", o.consider_endpoints);
  set_flag("optuna31_kernel_scale", o.optuna31_kernel_scale);
  set_flag("discrete_widths", o.discrete_widths);
  set_flag("mixed_space_prior", o.mixed_space_prior);
  section.reject_unknown_keys();
  return std::make_unique<TpeSampler>(o);
}

}  // namespace bfhpo::hpo
