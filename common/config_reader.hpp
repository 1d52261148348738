// The one reader of the JSON files a user writes (study.json, params files):
// every section of every file goes through it, so every file gets the same
// checks and the same messages.
//
// Parsing (read_config_file, parse_config_text) refuses, as a UserError
// naming the file: bad syntax (with the byte), a key given twice in one
// object (JSON would silently keep the last), nesting deeper than
// kMaxConfigDepth (a stack-safe limit; real files nest 4 deep), numbers
// outside the doubles (1e400), a path that is not a regular file (a
// directory, a FIFO, /dev/zero) or holds more than kMaxConfigFileBytes, and a
// file that cannot be read (with the system's reason): common/input_file.hpp.
//
// Reading (ConfigSection) walks one object: each accessor reads a key (absent
// -> nullopt), checks its type and, for integers, its range (never a silent
// truncation: 3000000000 is not an int), and records the key as known.
// reject_unknown_keys() then refuses any other key, naming the closest known
// one ("training.epocs" -> did you mean 'training.epochs'?). Every error names
// the file and the dotted field path and gives the fix.
//
// Semantic checks that involve one options struct live in the struct itself
// (Ceres' IsValid style): `std::optional<ConfigProblem> problem() const` says
// what is wrong with which of its fields, and ConfigSection::check turns that
// into a UserError at the section's path.
#pragma once

#include "common/user_error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo {

inline constexpr int kMaxConfigDepth = 64;
inline constexpr std::uint64_t kMaxConfigFileBytes = 64ull << 20;  // real study and params files: a few kB

nlohmann::json parse_config_text(const std::string& text, const std::string& source);
// `what` names the file's role in messages ("study file", "params file").
nlohmann::json read_config_file(const std::filesystem::path& file, const std::string& what);
// {"params": {...}} (what `bfhpo export --best` writes) or a plain {"name": value, ...}.
nlohmann::json read_params_file(const std::filesystem::path& file);

// The candidate closest to a misspelt name (Levenshtein distance).
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

// What an options struct finds wrong with itself: `field` relative to the
// struct's section ("min_batch_size"), the problem and the fix.
struct ConfigProblem {
  std::string field;
  std::string problem;
  std::string fix;
};

class ConfigSection {
 public:
  // `path` is the section's dotted path ("" for the whole file, "memory.oom_retry").
  // A value that is not an object is a UserError at `path`.
  ConfigSection(const nlohmann::json& value, std::string source, std::string path);

  const std::string& source() const { return source_; }
  // "path.key" ("key" at the top level).
  std::string field(const std::string& key) const;
  UserError error(const std::string& key, const std::string& problem, const std::string& fix) const;

  // The raw value (declares the key known); nullptr when absent. For values
  // of several shapes (a string or an object) that the caller checks itself.
  const nlohmann::json* find(const std::string& key);
  // Keys read by another reader (a later layer), known here.
  void allow(std::initializer_list<const char*> keys);

  // Absent -> nullopt. Present: the type is checked (null is not a value).
  std::optional<int64_t> integer(const std::string& key, int64_t minimum,
                                 int64_t maximum = std::numeric_limits<int64_t>::max());
  std::optional<int> int32(const std::string& key, int minimum) {
    const auto value = integer(key, minimum, std::numeric_limits<int>::max());
    return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
  }
  std::optional<double> number(const std::string& key);  // finite
  std::optional<bool> boolean(const std::string& key);
  std::optional<std::string> string(const std::string& key);  // non-empty
  // One of `choices`.
  std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& choices);
  // A nested object, read by its own ConfigSection at "path.key".
  std::optional<ConfigSection> section(const std::string& key);

  // Refuses the first key no accessor or allow() declared.
  void reject_unknown_keys() const;
  // Throws `problem` as a UserError at this section's path.
  void check(const std::optional<ConfigProblem>& problem) const;

 private:
  const nlohmann::json& object_;
  std::string source_;
  std::string path_;
  std::vector<std::string> known_;
};

// One value at `field` of `source`, for readers that map dotted names to
// fields themselves (the approximator's and a trial's params).
int64_t config_integer(const nlohmann::json& value, const std::string& source, const std::string& field,
                       int64_t minimum, int64_t maximum = std::numeric_limits<int64_t>::max());
double config_number(const nlohmann::json& value, const std::string& source, const std::string& field);
bool config_boolean(const nlohmann::json& value, const std::string& source, const std::string& field);

}  // namespace bfhpo
