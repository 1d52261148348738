#include "hpo/sampler_factory.hpp"

#include "common/closest_name.hpp"
#include "common/user_error.hpp"
#include "hpo/random_sampler.hpp"
#include "hpo/section_options.hpp"
#include "hpo/tpe/tpe_sampler.hpp"

#include <algorithm>

namespace bfhpo::hpo {
std::unique_ptr<Sampler> make_sampler(const StudySpec& spec) {
  const std::string source = spec.source.string();
  const nlohmann::json& section = spec.sampler;
  const std::string type = section.value("type", std::string("tpe"));
  if (type == "random") return std::make_unique<RandomSampler>();
  if (type != "tpe")
    throw UserError::at(source, "sampler.type", "unknown sampler '" + type + "'", "use \"tpe\" or \"random\"");
  const std::vector<std::string> known{"type", "preset", "n_startup_trials", "n_ei_candidates", "startup",
                                      "bandwidth", "weights", "multivariate", "group", "constant_liar",
                                      "consider_magic_clip", "consider_endpoints", "optuna31_kernel_scale", "budget_aware",
                                      "gamma"};
  for (const auto& item : section.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      throw UserError::at(source, "sampler." + item.key(), "unknown field",
                          "did you mean 'sampler." + closest_name(item.key(), known) + "'?");
  // The preset gives every default; the other keys override it one by one.
  TpeOptions o = choice_option(section, "sampler", "preset", {"bfhpo", "optuna"}, source) == "optuna"
                     ? optuna31_tpe_options()
                     : TpeOptions{};
  const auto set_from_choice = [&](const char* key, const std::vector<std::string>& choices, auto& field,
                                   auto first_choice_value, auto second_choice_value) {
    if (section.contains(key))
      field = choice_option(section, "sampler", key, choices, source) == choices.front() ? first_choice_value
                                                                                          : second_choice_value;
  };
  o.n_startup_trials = int_option(section, "sampler", "n_startup_trials", o.n_startup_trials, 0, source);
  o.n_ei_candidates = int_option(section, "sampler", "n_ei_candidates", o.n_ei_candidates, 1, source);
  set_from_choice("startup", {"latin_hypercube", "random"}, o.startup, StartupDesign::LatinHypercube,
                  StartupDesign::Random);
  set_from_choice("bandwidth", {"spread", "optuna"}, o.bandwidth_from_spread, true, false);
  set_from_choice("weights", {"improvement", "optuna"}, o.below_weights, BelowWeights::Improvement,
                  BelowWeights::Optuna);
  set_from_choice("gamma", {"bfhpo", "optuna"}, o.gamma_share, 0.15, 0.1);
  o.budget_aware = bool_option(section, "sampler", "budget_aware", o.budget_aware, source);
  o.n_trials = spec.n_trials;
  o.multivariate = bool_option(section, "sampler", "multivariate", o.multivariate, source);
  o.group = bool_option(section, "sampler", "group", o.group, source);
  o.constant_liar = bool_option(section, "sampler", "constant_liar", o.constant_liar, source);
  o.consider_magic_clip = bool_option(section, "sampler", "consider_magic_clip", o.consider_magic_clip, source);
  o.consider_endpoints = bool_option(section, "sampler", "consider_endpoints", o.consider_endpoints, source);
  o.optuna31_kernel_scale = bool_option(section, "sampler", "optuna31_kernel_scale", o.optuna31_kernel_scale, source);
  return std::make_unique<TpeSampler>(o);
}

}  // namespace bfhpo::hpo
