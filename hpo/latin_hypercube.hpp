// Latin hypercube startup design. Trial number t of a study takes stratum
// perm_d(t mod n) of n equal-probability strata in every parameter d, with a
// jittered position inside it; the permutations depend only on the study seed,
// the parameter and the round t / n. So the first n trials of a study cover
// every parameter's range once per stratum, whichever workers draw them, and
// two trials of one round never share a stratum (workers sharing a seed cannot
// draw the same point). Strata are quantiles of each distribution's uniform
// prior (value_at_quantile): log scale for log params, equal shares of the
// grid, the integers and the choices.
#pragma once

#include "hpo/search_space.hpp"

#include <cstdint>
#include <random>

namespace bfhpo::hpo {

// The point of trial `trial_number` in the design of `strata` strata; the
// jitter inside each stratum comes from `rng`. Only active parameters are set.
Params latin_hypercube_point(const SearchSpace& space, int strata, std::uint64_t study_seed, int trial_number,
                             std::mt19937_64& rng);

}  // namespace bfhpo::hpo
