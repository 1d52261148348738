#include "hpo/random_sampler.hpp"

#include <cmath>

namespace bfhpo::hpo {

double draw_value(const Distribution& distribution, std::mt19937_64& rng) {
  if (const auto* f = std::get_if<FloatDistribution>(&distribution)) {
    if (f->step) {
      auto n = static_cast<long long>(std::floor((f->high - f->low) / *f->step + 1e-9));
      return std::min(f->high, f->low + *f->step * std::uniform_int_distribution<long long>(0, n)(rng));
    }
    if (f->log) return std::exp(std::uniform_real_distribution<double>(std::log(f->low), std::log(f->high))(rng));
    return std::uniform_real_distribution<double>(f->low, f->high)(rng);
  }
  if (const auto* i = std::get_if<IntDistribution>(&distribution)) {
    if (i->log) {
      double u = std::uniform_real_distribution<double>(std::log(i->low - 0.5), std::log(i->high + 0.5))(rng);
      return static_cast<double>(std::clamp(std::llround(std::exp(u)), i->low, i->high));
    }
    long long n = (i->high - i->low) / i->step;
    return static_cast<double>(i->low + i->step * std::uniform_int_distribution<long long>(0, n)(rng));
  }
  const auto& c = std::get<CategoricalDistribution>(distribution);
  return static_cast<double>(std::uniform_int_distribution<std::size_t>(0, c.choices.size() - 1)(rng));
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
  std::mt19937_64 rng(request.rng_seed);
  Proposal proposal = draw_feasible(request, rng);
  if (proposal.note.empty()) proposal.note = "random";
  return proposal;
}

}  // namespace bfhpo::hpo
