#include "hpo/journal_json.hpp"

#include <cmath>
#include <limits>

namespace bfhpo::hpo {
namespace {

// Non-finite numbers travel through nlohmann as strings with this prefix; a
// NUL cannot start a string in a journal line (it would be written \u0000).
const std::string kMarker = std::string(1, '\0') + "bfhpo:";

void restore_non_finite(nlohmann::json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.compare(0, kMarker.size(), kMarker) != 0) return;
    const std::string token = s.substr(kMarker.size());
    if (token == "NaN") value = std::numeric_limits<double>::quiet_NaN();
    else if (token == "Infinity") value = std::numeric_limits<double>::infinity();
    else value = -std::numeric_limits<double>::infinity();
  } else if (value.is_structured()) {
    for (auto& child : value) restore_non_finite(child);
  }
}

nlohmann::json mark_non_finite(const nlohmann::json& value, bool& any) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    any = true;
    double v = value.get<double>();
    return kMarker + (std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
  }
  if (!value.is_structured()) return value;
  nlohmann::json out = value;
  for (auto it = out.begin(); it != out.end(); ++it) *it = mark_non_finite(*it, any);
  return out;
}

}  // namespace

nlohmann::json parse_python_json(const std::string& line) {
  if (line.find("NaN") == std::string::npos && line.find("Infinity") == std::string::npos)
    return nlohmann::json::parse(line);

  // Copy the line, turning the tokens outside strings into marked strings.
  std::string text;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      text += c;
      if (c == '\\' && i + 1 < line.size()) text += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      text += c;
      continue;
    }
    bool replaced = false;
    for (const char* token : {"NaN", "Infinity", "-Infinity"}) {
      std::size_t n = std::char_traits<char>::length(token);
      if (line.compare(i, n, token) != 0) continue;
      text += "\"\\u0000bfhpo:" + std::string(token) + "\"";
      i += n - 1;
      replaced = true;
      break;
    }
    if (!replaced) text += c;
  }
  nlohmann::json value = nlohmann::json::parse(text);
  restore_non_finite(value);
  return value;
}

std::string dump_python_json(const nlohmann::json& value) {
  bool any = false;
  nlohmann::json marked = mark_non_finite(value, any);
  std::string text = marked.dump();
  if (!any) return text;
  for (const char* token : {"NaN", "Infinity", "-Infinity"}) {
    const std::string quoted = "\"\\u0000bfhpo:" + std::string(token) + "\"";
    for (std::size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at))
      text.replace(at, quoted.size(), token);
  }
  return text;
}

}  // namespace bfhpo::hpo
