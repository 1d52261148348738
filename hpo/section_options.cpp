#include "hpo/section_options.hpp"

#include "common/user_error.hpp"

#include <algorithm>

namespace bfhpo::hpo {

int int_option(const nlohmann::json& section, const std::string& section_name, const char* key, int fallback,
               int minimum, const std::string& source) {
  if (!section.contains(key)) return fallback;
  const nlohmann::json& v = section[key];
  if (!v.is_number_integer() || v.get<long long>() < minimum)
    throw UserError::at(source, section_name + "." + key,
                        "must be an integer >= " + std::to_string(minimum) + ", got " + v.dump(),
                        "write e.g. \"" + std::string(key) + "\": " + std::to_string(std::max(fallback, minimum)));
  return v.get<int>();
}

std::string choice_option(const nlohmann::json& section, const std::string& section_name, const char* key,
                          const std::vector<std::string>& choices, const std::string& source) {
  if (!section.contains(key)) return choices.front();
  const nlohmann::json& v = section[key];
  if (v.is_string() && std::find(choices.begin(), choices.end(), v.get<std::string>()) != choices.end())
    return v.get<std::string>();
  std::string quoted;
  for (const auto& c : choices) quoted += (quoted.empty() ? "\"" : " or \"") + c + "\"";
  throw UserError::at(source, section_name + "." + key, "unknown value " + v.dump(), "use " + quoted);
}

bool bool_option(const nlohmann::json& section, const std::string& section_name, const char* key, bool fallback,
                 const std::string& source) {
  if (!section.contains(key)) return fallback;
  if (!section[key].is_boolean())
    throw UserError::at(source, section_name + "." + key, "must be true or false, got " + section[key].dump(),
                        "write true or false");
  return section[key].get<bool>();
}

}  // namespace bfhpo::hpo
