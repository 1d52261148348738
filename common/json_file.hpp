// Reading a JSON file a user wrote: a missing file or bad syntax is a
// UserError naming the file and `what` it is, with the fix.
#pragma once

#include "common/user_error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bfhpo {

inline nlohmann::json read_json_file(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file);
  if (!in) throw UserError::at(file.string(), "", "cannot open the " + what, "check the path");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError::at(file.string(), "", std::string("not valid JSON (") + e.what() + ")",
                        "fix the JSON syntax at that byte");
  }
}

// {"params": {...}} (what `bfhpo export --best` writes) or a plain {"name": value, ...}.
inline nlohmann::json read_params_file(const std::filesystem::path& file) {
  const nlohmann::json document = read_json_file(file, "params file");
  const nlohmann::json params = document.is_object() && document.contains("params") ? document["params"] : document;
  if (!params.is_object())
    throw UserError::at(file.string(), "params", "expected an object {\"name\": value}", "give {\"flow.depth\": 4}");
  return params;
}

}  // namespace bfhpo
