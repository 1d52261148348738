// Reading the options of a study-file section such as "sampler" or "pruner":
// a missing key gives the default, a bad value a UserError naming the file,
// the field (section.key) and the fix.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bfhpo::hpo {

int int_option(const nlohmann::json& section, const std::string& section_name, const char* key, int fallback,
               int minimum, const std::string& source);
// One of `choices` (the first is the default when the key is missing).
std::string choice_option(const nlohmann::json& section, const std::string& section_name, const char* key,
                          const std::vector<std::string>& choices, const std::string& source);
bool bool_option(const nlohmann::json& section, const std::string& section_name, const char* key, bool fallback,
                 const std::string& source);

}  // namespace bfhpo::hpo
