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
  int index = 0;  // of the parameter in the space: its permutation does not depend on which are active
  for (const auto& spec : space.params()) {
    const int parameter = index++;
    if (!space.is_active(spec, params)) continue;
    std::iota(permutation.begin(), permutation.end(), 0);
    std::mt19937_64 shuffle_rng(trial_rng_seed(trial_rng_seed(study_seed, round), parameter));
    std::shuffle(permutation.begin(), permutation.end(), shuffle_rng);
    params[spec.name] = value_at_quantile(spec.distribution, (permutation[slot] + jitter(rng)) / strata);
  }
  return params;
}

}  // namespace bfhpo::hpo
