#include "hpo/sampler_factory.hpp"

#include "common/user_error.hpp"
#include "hpo/random_sampler.hpp"
#include "hpo/section_options.hpp"
#include "hpo/tpe/tpe_sampler.hpp"

namespace bfhpo::hpo {
std::unique_ptr<Sampler> make_sampler(const StudySpec& spec) {
  const std::string source = spec.source.string();
  const nlohmann::json& section = spec.sampler;
  const std::string type = section.value("type", std::string("tpe"));
  if (type == "random") return std::make_unique<RandomSampler>();
  if (type != "tpe")
    throw UserError::at(source, "sampler.type", "unknown sampler '" + type + "'", "use \"tpe\" or \"random\"");
  TpeOptions o;
  o.n_startup_trials = int_option(section, "sampler", "n_startup_trials", o.n_startup_trials, 0, source);
  o.n_ei_candidates = int_option(section, "sampler", "n_ei_candidates", o.n_ei_candidates, 1, source);
  o.multivariate = bool_option(section, "sampler", "multivariate", o.multivariate, source);
  o.group = bool_option(section, "sampler", "group", o.group, source);
  o.constant_liar = bool_option(section, "sampler", "constant_liar", o.constant_liar, source);
  o.consider_magic_clip = bool_option(section, "sampler", "consider_magic_clip", o.consider_magic_clip, source);
  o.consider_endpoints = bool_option(section, "sampler", "consider_endpoints", o.consider_endpoints, source);
  o.optuna31_kernel_scale = bool_option(section, "sampler", "optuna31_kernel_scale", o.optuna31_kernel_scale, source);
  return std::make_unique<TpeSampler>(o);
}

}  // namespace bfhpo::hpo
