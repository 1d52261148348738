// A fast reader for the one-line JSON objects of the journal, in front of
// parse_python_json. It reads an object's members into typed fields without
// building a tree, and it is strict: it accepts a line only when
// parse_python_json would read exactly the same values from it, and declines
// (returns false) on anything it does not handle -- a \u escape or a byte
// outside printable ASCII in a string, a duplicate key, an integer of more
// than 18 digits, malformed text -- so that the caller parses the line with
// parse_python_json and gets its values or its error.
//
// Numbers keep nlohmann's meaning: an integer token is an integer (and its
// double is static_cast from it, so "-0" is +0.0), other tokens are doubles,
// and Python's NaN / Infinity / -Infinity tokens are doubles. An array of
// numbers is read natively (its size and first element); other arrays and
// objects are parsed by parse_python_json and kept as nlohmann::json.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bfhpo::hpo {

class FlatJsonObject {
 public:
  enum class Kind { Null, Bool, Integer, Float, String, NumberArray, Structured };
  struct Field {
    std::string_view key;
    Kind kind = Kind::Null;
    bool boolean = false;
    std::int64_t integer = 0;     // Kind::Integer
    double number = 0;            // Kind::Integer (converted), Kind::Float, first of a non-empty Kind::NumberArray
    std::size_t array_size = 0;   // Kind::NumberArray
    std::string_view raw_string;  // Kind::String: between the quotes, escapes not yet decoded
    bool escaped = false;         // raw_string holds a backslash escape
    std::size_t structured = 0;   // Kind::Structured: index for structured()
  };

  // At most this many members; a line with more needs the full parser.
  static constexpr std::size_t kMaxFields = 12;

  // Reads the object on `line`, replacing what was read before (one object
  // is reused line after line); false where the line needs the full parser.
  bool scan(std::string_view line);

  // The member named `key`, or nullptr.
  const Field* find(std::string_view key) const;
  // A String field's value with its escapes decoded.
  static std::string decoded(const Field& field);
  // A Structured field's value.
  const nlohmann::json& structured(const Field& field) const { return structured_[field.structured]; }

 private:
  std::array<Field, kMaxFields> fields_;
  std::size_t size_ = 0;
  std::vector<nlohmann::json> structured_;
};

}  // namespace bfhpo::hpo
