// Builds the sampler a study's "sampler" section names: {"type": "tpe", ...TPE
// options} or {"type": "random"}. Throws UserError naming the study file and
// the option on a bad value.
#pragma once

#include "hpo/sampler.hpp"
#include "hpo/study_spec.hpp"

#include <memory>

namespace bfhpo::hpo {

std::unique_ptr<Sampler> make_sampler(const StudySpec& spec);

}  // namespace bfhpo::hpo
