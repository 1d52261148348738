// A number a person writes as text (`bfhpo tell --value`, a constraint's
// bound in the study file): a plain decimal, 0.25, -3, 1e-4, .5. Never hex
// (0x10, which strtod reads as 16) nor a word (inf, nan): both places read
// numbers alike.
#pragma once

#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

namespace bfhpo {

// The value (too large: +-inf, as strtod gives it); none when `text` is not a plain decimal.
inline std::optional<double> parse_decimal(const std::string& text) {
  static const std::regex decimal(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  if (!std::regex_match(text, decimal)) return std::nullopt;
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace bfhpo
