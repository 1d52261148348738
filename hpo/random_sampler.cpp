#include "hpo/random_sampler.hpp"

namespace bfhpo::hpo {

Params RandomSampler::draw(const SearchSpace& space, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Params params;
  for (const auto& spec : space.params())
    if (space.is_active(spec, params)) params[spec.name] = value_at_quantile(spec.distribution, uniform(rng));
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
