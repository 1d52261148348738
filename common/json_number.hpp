// A number in bfhpo's JSON output: JSON has no NaN or infinity, so a value
// that is not finite (not computed, undefined) is written as null.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>

namespace bfhpo {

inline nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace bfhpo
