#include "hpo/random_sampler.hpp"

#include <cmath>

namespace bfhpo::hpo {

double draw_value(const Distribution& distribution, std::mt19937_64& rng) {
  return value_at_quantile(distribution, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
}

Params RandomSampler::draw(const SearchSpace& space, std::mt19937_64& rng) {
  Params params;
  for (const auto& spec : space.params())
    if (space.is_active(spec, params)) params[spec.name] = draw_value(spec.distribution, rng);
  return params;
}

Proposal RandomSampler::draw_feasible(const SampleRequest& request, std::mt19937_64& rng) {
  Proposal proposal;
  for (int attempt = 0; attempt < kMaxFeasibleDraws; ++attempt) {
    proposal.params = draw(request.space, rng);
    if (!request.feasible || request.feasible(proposal.params)) return proposal;
  }
  proposal.feasible = false;
  proposal.note = "no feasible draw in " + std::to_string(kMaxFeasibleDraws) + " random draws";
  return proposal;
}

Proposal RandomSampler::sample(const SampleRequest& request) {
  std::mt19937_64 rng(request.rng_seed());
  Proposal proposal = draw_feasible(request, rng);
  if (proposal.note.empty()) proposal.note = "random";
  return proposal;
}

}  // namespace bfhpo::hpo
