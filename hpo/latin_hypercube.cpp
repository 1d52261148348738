#include "hpo/latin_hypercube.hpp"

#include "hpo/sampler.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace bfhpo::hpo {

Params latin_hypercube_point(const SearchSpace& space, int strata, std::uint64_t study_seed, int trial_number,
                             std::mt19937_64& rng) {
  strata = std::max(strata, 1);
  const int round = trial_number / strata, slot = trial_number % strata;
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  std::vector<int> permutation(static_cast<std::size_t>(strata));
  Params params;
  // A parameter's permutation depends on its place in the space, not on which parameters are active.
  for (std::size_t parameter = 0; parameter < space.params().size(); ++parameter) {
    const ParamSpec& spec = space.params()[parameter];
    if (!space.is_active(spec, params)) continue;
    std::iota(permutation.begin(), permutation.end(), 0);
    std::mt19937_64 shuffle_rng(trial_rng_seed(trial_rng_seed(study_seed, round), static_cast<int>(parameter)));
    std::shuffle(permutation.begin(), permutation.end(), shuffle_rng);
    params[spec.name] = value_at_quantile(spec.distribution, (permutation[slot] + jitter(rng)) / strata);
  }
  return params;
}

}  // namespace bfhpo::hpo
