#include "hpo/trial_attrs.hpp"

#include <iostream>
#include <mutex>
#include <set>
#include <utility>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

bool holds(const json& value, AttrType type) {
  switch (type) {
    case AttrType::Boolean: return value.is_boolean();
    case AttrType::Integer: return value.is_number_integer();
    case AttrType::Number: return value.is_number();
    case AttrType::String: return value.is_string();
    case AttrType::Object: return value.is_object();
    case AttrType::Array: return value.is_array();
  }
  return false;
}

const char* type_name(AttrType type) {
  switch (type) {
    case AttrType::Boolean: return "true or false";
    case AttrType::Integer: return "an integer";
    case AttrType::Number: return "a number";
    case AttrType::String: return "a string";
    case AttrType::Object: return "an object";
    case AttrType::Array: return "a list";
  }
  return "?";
}

// Once per process for each (trial, key): status and optimize read the same attributes many times.
void warn_once(const FrozenTrial& trial, const std::string& key, const json& value, AttrType type) {
  static std::mutex mutex;
  static std::set<std::pair<int, std::string>> warned;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!warned.emplace(trial.trial_id, key).second) return;
  std::string shown = value.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  std::cerr << "bfhpo: warning: trial " << trial.number << ": system attribute " << key << " is " << shown
            << ", not " << type_name(type) << " as bfhpo writes it (another writer set it); ignored\n";
}

}  // namespace

const json* system_attr(const FrozenTrial& trial, const std::string& key, AttrType type) {
  const auto found = trial.system_attrs.find(key);
  if (found == trial.system_attrs.end() || found->is_null()) return nullptr;
  if (holds(*found, type)) return &*found;
  warn_once(trial, key, *found, type);
  return nullptr;
}

std::optional<bool> boolean_attr(const FrozenTrial& trial, const std::string& key) {
  const json* value = system_attr(trial, key, AttrType::Boolean);
  return value ? std::optional<bool>(value->get<bool>()) : std::nullopt;
}

std::optional<int64_t> integer_attr(const FrozenTrial& trial, const std::string& key) {
  const json* value = system_attr(trial, key, AttrType::Integer);
  return value ? std::optional<int64_t>(value->get<int64_t>()) : std::nullopt;
}

std::optional<double> number_attr(const FrozenTrial& trial, const std::string& key) {
  const json* value = system_attr(trial, key, AttrType::Number);
  return value ? std::optional<double>(value->get<double>()) : std::nullopt;
}

std::optional<std::string> string_attr(const FrozenTrial& trial, const std::string& key) {
  const json* value = system_attr(trial, key, AttrType::String);
  return value ? std::optional<std::string>(value->get<std::string>()) : std::nullopt;
}

}  // namespace bfhpo::hpo
