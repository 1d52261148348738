// JSON lines as Python's json module writes and reads them: NaN, Infinity and
// -Infinity are tokens, which nlohmann_json neither reads nor writes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace bfhpo::hpo {

// Parses one line; throws nlohmann::json::parse_error on malformed text.
nlohmann::json parse_python_json(const std::string& line);
// Dumps on one line, non-finite numbers as Python's tokens.
std::string dump_python_json(const nlohmann::json& value);

}  // namespace bfhpo::hpo
