// Per-batch seed from a study seed and a batch index (splitmix64), so that a
// simulated batch is a pure function of (seed, batch_index).
#pragma once

#include <cstdint>

namespace bfhpo::models {

inline uint64_t mix_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace bfhpo::models
