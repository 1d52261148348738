// The sampler interface: propose a full assignment of a search space from the
// trials so far. Samplers are stateless between calls except for options; all
// randomness comes from the `rng_seed` the study passes (derived from the
// study seed and the new trial's number), so one worker with one seed gets
// the same sequence, and workers sharing a seed draw different trials.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/search_space.hpp"
#include "hpo/trial_span.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace bfhpo::hpo {

// Vetoes a candidate before it is scored (the trials layer passes the memory estimator).
using FeasiblePredicate = std::function<bool(const Params&)>;

struct SampleRequest {
  const SearchSpace& space;
  // Every trial of the study except the one being sampled, any state.
  TrialSpan trials;
  StudyDirection direction = StudyDirection::Minimize;
  std::uint64_t rng_seed = 0;
  FeasiblePredicate feasible;  // empty: everything is feasible
};

struct Proposal {
  Params params;
  // Set when the predicate vetoed every candidate the sampler scored and the
  // proposal came from the random fallback.
  bool all_candidates_vetoed = false;
  // False only when no feasible assignment was found at all; the caller
  // decides (the trials layer prunes it for memory).
  bool feasible = true;
  std::string note;  // what happened, for logs ("startup random", "tpe", ...)
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual Proposal sample(const SampleRequest& request) = 0;
  virtual std::string name() const = 0;
};

}  // namespace bfhpo::hpo
