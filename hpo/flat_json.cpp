#include "hpo/flat_json.hpp"

#include "hpo/journal_json.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace bfhpo::hpo {
namespace {

// Bytes a string may hold as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> plain_bytes() {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7F; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}
constexpr std::array<bool, 256> kPlain = plain_bytes();

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool done() const { return at_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[at_]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  bool eat(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  // A string after its opening quote: printable ASCII and the escapes other than \u.
  bool string(std::string_view& raw, bool& escaped) {
    const std::size_t start = at_;
    escaped = false;
    for (; at_ < text_.size(); ++at_) {
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (kPlain[c]) continue;
      if (c == '"') {
        raw = text_.substr(start, at_ - start);
        ++at_;
        return true;
      }
      if (c < 0x20 || c >= 0x7F) return false;
      if (c == '\\') {
        if (++at_ >= text_.size()) return false;
        const char e = text_[at_];
        if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') return false;
        escaped = true;
      }
    }
    return false;
  }

  // A JSON number, or one of Python's non-finite tokens.
  bool number(FlatJsonObject::Field& field) {
    if (eat("NaN")) return set_float(field, std::numeric_limits<double>::quiet_NaN());
    if (eat("Infinity")) return set_float(field, std::numeric_limits<double>::infinity());
    if (eat("-Infinity")) return set_float(field, -std::numeric_limits<double>::infinity());
    const std::size_t start = at_;
    eat('-');
    const std::size_t int_start = at_;
    if (eat('0')) {
    } else if (!digits()) {
      return false;
    }
    const std::size_t int_digits = at_ - int_start;
    bool integer = true;
    if (eat('.')) {
      integer = false;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      integer = false;
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + at_;
    if (integer) {
      if (int_digits > 18) return false;
      std::int64_t value = 0;
      if (std::from_chars(first, last, value).ec != std::errc()) return false;
      field.kind = FlatJsonObject::Kind::Integer;
      field.integer = value;
      field.number = static_cast<double>(value);
      return true;
    }
    double value = 0;
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last || !std::isfinite(value)) return false;
    return set_float(field, value);
  }

  // An array of numbers, read natively; false (with the position restored) for any other array.
  bool number_array(FlatJsonObject::Field& field) {
    const std::size_t start = at_;
    FlatJsonObject::Field element;
    std::size_t size = 0;
    double first = 0;
    eat('[');
    skip_space();
    if (!eat(']')) {
      for (;;) {
        if (!number(element)) break;
        if (size++ == 0) first = element.number;
        skip_space();
        if (eat(']')) {
          field.kind = FlatJsonObject::Kind::NumberArray;
          field.array_size = size;
          field.number = first;
          return true;
        }
        if (!eat(',')) break;
        skip_space();
      }
      at_ = start;
      return false;
    }
    field.kind = FlatJsonObject::Kind::NumberArray;
    field.array_size = 0;
    return true;
  }

  // An array or object: skipped over (strings respected), then parsed in full into `out`.
  bool structured(FlatJsonObject::Field& field, std::vector<nlohmann::json>& out) {
    const std::size_t start = at_;
    int depth = 0;
    bool in_string = false;
    for (; at_ < text_.size(); ++at_) {
      const char c = text_[at_];
      if (in_string) {
        if (c == '\\') ++at_;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if ((c == ']' || c == '}') && --depth == 0) {
        ++at_;
        try {
          out.push_back(parse_python_json(std::string(text_.substr(start, at_ - start))));
        } catch (const std::exception&) {
          return false;
        }
        field.kind = FlatJsonObject::Kind::Structured;
        field.structured = out.size() - 1;
        return true;
      }
    }
    return false;
  }

 private:
  bool digits() {
    const std::size_t start = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    return at_ > start;
  }
  static bool set_float(FlatJsonObject::Field& field, double value) {
    field.kind = FlatJsonObject::Kind::Float;
    field.number = value;
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

bool scan_value(Scanner& in, FlatJsonObject::Field& field, std::vector<nlohmann::json>& structured) {
  const char c = in.peek();
  if (c == '"') {
    in.eat('"');
    field.kind = FlatJsonObject::Kind::String;
    return in.string(field.raw_string, field.escaped);
  }
  if (c == '[' && in.number_array(field)) return true;
  if (c == '[' || c == '{') return in.structured(field, structured);
  if (in.eat("null")) {
    field.kind = FlatJsonObject::Kind::Null;
    return true;
  }
  if (in.eat("true") || in.eat("false")) {
    field.kind = FlatJsonObject::Kind::Bool;
    field.boolean = c == 't';
    return true;
  }
  return in.number(field);
}

}  // namespace

bool FlatJsonObject::scan(std::string_view line) {
  size_ = 0;
  structured_.clear();
  Scanner in(line);
  in.skip_space();
  if (!in.eat('{')) return false;
  in.skip_space();
  if (!in.eat('}')) {
    for (;;) {
      if (size_ == kMaxFields) return false;
      Field& field = fields_[size_];
      field = Field{};
      bool escaped = false;
      if (!in.eat('"') || !in.string(field.key, escaped) || escaped) return false;
      if (find(field.key)) return false;
      in.skip_space();
      if (!in.eat(':')) return false;
      in.skip_space();
      if (!scan_value(in, field, structured_)) return false;
      ++size_;
      in.skip_space();
      if (in.eat('}')) break;
      if (!in.eat(',')) return false;
      in.skip_space();
    }
  }
  in.skip_space();
  return in.done();
}

const FlatJsonObject::Field* FlatJsonObject::find(std::string_view key) const {
  for (std::size_t i = 0; i < size_; ++i)
    if (fields_[i].key == key) return &fields_[i];
  return nullptr;
}

std::string FlatJsonObject::decoded(const Field& field) {
  if (!field.escaped) return std::string(field.raw_string);
  std::string out;
  out.reserve(field.raw_string.size());
  for (std::size_t i = 0; i < field.raw_string.size(); ++i) {
    char c = field.raw_string[i];
    if (c == '\\') {
      switch (field.raw_string[++i]) {
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        default: c = field.raw_string[i];  // " \ /
      }
    }
    out += c;
  }
  return out;
}

}  // namespace bfhpo::hpo
