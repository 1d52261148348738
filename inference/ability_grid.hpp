// The grid of abilities every integral over a person's ability uses (the
// marginal likelihood, the model check's ability draws, person scores):
// kAbilityGridPoints points over [-kAbilityLimit, kAbilityLimit], step 0.1.
// The N(0, 1) mass beyond +-6 is 2e-9.
#pragma once

#include <cstdint>

namespace bfhpo::inference {

inline constexpr int64_t kAbilityGridPoints = 121;
inline constexpr double kAbilityLimit = 6.0;

}  // namespace bfhpo::inference
