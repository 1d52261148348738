// Independent uniform sampling of every active parameter: linear or
// log-uniform for float and int, uniform over the grid for step, uniform over
// the choices for categorical. TPE uses it for its startup trials and as the
// feasible fallback.
#pragma once

#include "hpo/sampler.hpp"

#include <random>

namespace bfhpo::hpo {

class RandomSampler : public Sampler {
 public:
  // Draws until `feasible` accepts, at most this many times.
  static constexpr int kMaxFeasibleDraws = 1000;

  Proposal sample(const SampleRequest& request) override;
  std::string name() const override { return "random"; }

  // One independent draw of every active parameter.
  static Params draw(const SearchSpace& space, std::mt19937_64& rng);
  // Draws until request.feasible accepts (bounded); flags the proposal otherwise.
  static Proposal draw_feasible(const SampleRequest& request, std::mt19937_64& rng);
};

}  // namespace bfhpo::hpo
