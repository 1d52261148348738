// The sampler interface: propose a full assignment of a search space from the
// trials so far. Samplers are stateless between calls except for options; all
// randomness comes from the study seed and the new trial's number
// (`rng_seed()`), so one worker with one seed gets the same sequence, and
// workers sharing a seed draw different trials (their trials' numbers differ).
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

// The seed of the random stream for trial `trial_number` of a study seeded
// `study_seed` (splitmix64 of the two): neighbouring trials get unrelated streams.
inline std::uint64_t trial_rng_seed(std::uint64_t study_seed, int trial_number) {
  std::uint64_t x = study_seed * 0x100000001B3ULL + static_cast<std::uint64_t>(trial_number) + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

struct SampleRequest {
  const SearchSpace& space;
  // Every trial of the study except the one being sampled, any state.
  TrialSpan trials;
  Directions directions = {StudyDirection::Minimize};  // one per objective
  std::uint64_t study_seed = 0;
  int trial_number = 0;        // of the trial being sampled
  FeasiblePredicate feasible;  // empty: everything is feasible

  std::uint64_t rng_seed() const { return trial_rng_seed(study_seed, trial_number); }
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
