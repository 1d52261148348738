#include "common/config_reader.hpp"

#include "common/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace bfhpo {
namespace {

using nlohmann::json;

// The parser's position, for messages: one frame per open object or array.
struct Frame {
  bool is_object = false;
  std::set<std::string> keys;
  std::string key;   // the object's current key
  std::size_t index = 0;  // the array's next element
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string path;
  for (const auto& frame : frames) {
    if (frame.is_object) {
      if (!frame.key.empty() || !path.empty()) path += (path.empty() ? "" : ".") + frame.key;
    } else {
      path += "[" + std::to_string(frame.index) + "]";
    }
  }
  return path;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  return out;
}

std::string type_name(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "a list";
  return "an object";
}

// value.dump() for a message, shortened: a value can be a whole section.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

json parse_config_text(const std::string& text, const std::string& source) {
  std::vector<Frame> frames;
  // Track the position to name the field of a duplicate key or a too-deep value.
  const json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (depth >= kMaxConfigDepth)
        throw UserError::at(source, path_of(frames),
                            "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels",
                            "a bfhpo file nests a few levels; check the brackets");
      Frame frame;
      frame.is_object = event == Event::object_start;
      frames.push_back(std::move(frame));
    } else if (event == Event::key) {
      Frame& frame = frames.back();
      const std::string key = parsed.get<std::string>();
      frame.key = key;
      if (!frame.keys.insert(key).second)
        throw UserError::at(source, path_of(frames), "given twice in the same object (JSON keeps only the last)",
                            "keep one of the two");
    } else if (event == Event::object_end || event == Event::array_end) {
      frames.pop_back();
    }
    if ((event == Event::value || event == Event::object_end || event == Event::array_end) && !frames.empty() &&
        !frames.back().is_object)
      ++frames.back().index;
    return true;
  };
  try {
    return json::parse(text, callback);
  } catch (const json::parse_error& e) {
    throw UserError::at(source, "", std::string("not valid JSON (") + e.what() + ")", "fix the JSON syntax at that byte");
  } catch (const json::exception& e) {  // out_of_range 406: a number beyond the doubles
    throw UserError::at(source, path_of(frames), std::string("unreadable value (") + e.what() + ")",
                        "write numbers within +-1.7e308");
  }
}

json read_config_file(const std::filesystem::path& file, const std::string& what) {
  return parse_config_text(read_input_file(file, {what, "the path of a JSON file", kMaxConfigFileBytes}), file.string());
}

json read_params_file(const std::filesystem::path& file) {
  const json document = read_config_file(file, "params file");
  const json params = document.is_object() && document.contains("params") ? document["params"] : document;
  if (!params.is_object())
    throw UserError::at(file.string(), "params", "expected an object {\"name\": value}", "give {\"flow.depth\": 4}");
  return params;
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& candidate : candidates) {
    const std::size_t d = distance(name, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

int64_t config_integer(const json& value, const std::string& source, const std::string& field, int64_t minimum,
                       int64_t maximum) {
  const std::string range = "[" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
  const auto out_of_range = [&] {
    return UserError::at(source, field, "must be an integer in " + range + ", got " + shown(value),
                         "give a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum));
  };
  int64_t n = 0;
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw out_of_range();
    n = static_cast<int64_t>(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    n = value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double x = value.get<double>();
    if (x != std::floor(x))
      throw UserError::at(source, field, "must be a whole number, got " + shown(value), "give an integer in " + range);
    if (!(std::abs(x) < 9.2e18)) throw out_of_range();  // beyond int64; also catches what no check below could
    n = static_cast<int64_t>(x);
  } else {
    throw UserError::at(source, field, "expected an integer, got " + type_name(value) + " " + shown(value),
                        "give a whole number in " + range);
  }
  if (n < minimum || n > maximum) throw out_of_range();
  return n;
}

double config_number(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_number())
    throw UserError::at(source, field, "expected a number, got " + type_name(value) + " " + shown(value),
                        "give a number such as 0.5");
  const double x = value.get<double>();
  if (!std::isfinite(x)) throw UserError::at(source, field, "must be finite", "give a finite number");
  return x;
}

bool config_boolean(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_boolean())
    throw UserError::at(source, field, "expected true or false, got " + type_name(value) + " " + shown(value),
                        "write true or false (no quotes)");
  return value.get<bool>();
}

ConfigSection::ConfigSection(const json& value, std::string source, std::string path)
    : object_(value), source_(std::move(source)), path_(std::move(path)) {
  if (!object_.is_object())
    throw UserError::at(source_, path_, "expected an object {...}, got " + type_name(object_) + " " + shown(object_),
                        path_.empty() ? "start the file with {\"name\": ...}" : "write \"" + path_ + "\": {...}");
}

std::string ConfigSection::field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

UserError ConfigSection::error(const std::string& key, const std::string& problem, const std::string& fix) const {
  return UserError::at(source_, key.empty() ? path_ : field(key), problem, fix);
}

const json* ConfigSection::find(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void ConfigSection::allow(std::initializer_list<const char*> keys) {
  for (const char* key : keys) find(key);
}

std::optional<int64_t> ConfigSection::integer(const std::string& key, int64_t minimum, int64_t maximum) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  return config_integer(*value, source_, field(key), minimum, maximum);
}

std::optional<double> ConfigSection::number(const std::string& key) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  return config_number(*value, source_, field(key));
}

std::optional<bool> ConfigSection::boolean(const std::string& key) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  return config_boolean(*value, source_, field(key));
}

std::optional<std::string> ConfigSection::string(const std::string& key) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_string() || value->get<std::string>().empty())
    throw error(key, "expected a non-empty string, got " + type_name(*value) + " " + shown(*value),
                "write \"" + key + "\": \"...\"");
  return value->get<std::string>();
}

std::optional<std::string> ConfigSection::choice(const std::string& key, const std::vector<std::string>& choices) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  if (value->is_string() && std::find(choices.begin(), choices.end(), value->get<std::string>()) != choices.end())
    return value->get<std::string>();
  std::string fix = "use " + quoted_list(choices);
  if (value->is_string()) {
    const std::string near = closest_name(value->get<std::string>(), choices);
    fix = "did you mean \"" + near + "\"? (" + fix + ")";
  }
  throw error(key, "unknown value " + shown(*value), fix);
}

std::optional<ConfigSection> ConfigSection::section(const std::string& key) {
  const json* value = find(key);
  if (!value) return std::nullopt;
  return ConfigSection(*value, source_, field(key));
}

void ConfigSection::reject_unknown_keys() const {
  for (const auto& item : object_.items()) {
    if (std::find(known_.begin(), known_.end(), item.key()) != known_.end()) continue;
    throw error(item.key(), "unknown key",
                known_.empty() ? "remove it"
                               : "did you mean '" + field(closest_name(item.key(), known_)) + "'? (or remove it)");
  }
}

void ConfigSection::check(const std::optional<ConfigProblem>& problem) const {
  if (problem) throw error(problem->field, problem->problem, problem->fix);
}

}  // namespace bfhpo
