#include "inference/response_matrix.hpp"

#include "common/input_file.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace bfhpo::inference {
namespace {

struct Position {
  size_t line = 1;
  size_t column = 1;
};

std::string where(const std::filesystem::path& file, size_t line, size_t column) {
  return file.string() + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// Length of the UTF-8 sequence starting at text[i], 0 when it is not valid
// (RFC 3629: the shortest form only, no surrogate halves, nothing past U+10FFFF).
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte_at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte_at(0);
  const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  uint32_t code = length == 1 ? lead : lead & (0x7Fu >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte_at(k) >> 6) != 0x2) return 0;
    code = (code << 6) | (byte_at(k) & 0x3Fu);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // of each length's code points
  if (code < kSmallest[length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return length;
}

void require_text(const std::filesystem::path& file, const std::string& text) {
  Position at;
  for (size_t i = 0; i < text.size();) {
    const size_t length = text[i] == '\0' ? 0 : utf8_length(text, i);
    if (length == 0)
      throw UserError(where(file, at.line, at.column) +
                      ": not a text file (a NUL byte or invalid UTF-8 here). Fix: give a CSV or TSV file of "
                      "responses (0/1, or 0..K-1 for graded items) with a header of item names");
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
    i += length;
  }
}

std::string trimmed(const std::string& field) {
  size_t begin = 0, end = field.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(field[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(field[end - 1]))) --end;
  return field.substr(begin, end - begin);
}

// The fields of line `number`, as RFC 4180 quotes them: a field in double
// quotes may hold the delimiter, and "" in it is one quote. Spaces around a
// field are dropped.
std::vector<std::string> split(const std::filesystem::path& file, size_t number, const std::string& line,
                               char delimiter) {
  const auto skip_spaces = [&](size_t i) {
    while (i < line.size() && line[i] != delimiter && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    return i;
  };
  std::vector<std::string> fields;
  for (size_t i = 0;; ++i) {
    i = skip_spaces(i);
    if (i < line.size() && line[i] == '"') {
      std::string field;
      for (++i;; ++i) {
        if (i >= line.size())
          throw UserError(where(file, number, fields.size() + 1) +
                          ": a quoted field is not closed on its line. Fix: end it with a double quote (a quote "
                          "inside it written twice: \"\"), or keep line breaks out of names");
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          break;
        }
      }
      i = skip_spaces(i + 1);
      if (i < line.size() && line[i] != delimiter)
        throw UserError(where(file, number, fields.size() + 1) +
                        ": text after a quoted field's closing quote. Fix: quote the whole field, a quote inside "
                        "it written twice (\"\")");
      fields.push_back(field);
    } else {
      const size_t end = std::min(line.find(delimiter, i), line.size());
      fields.push_back(trimmed(line.substr(i, end - i)));
      i = end;
    }
    if (i >= line.size()) return fields;
  }
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool is_id_name(const std::string& name) {
  static const std::set<std::string> names{"id", "person", "person_id", "respondent"};
  return names.count(lowercase(name)) > 0;
}

// A response file's lines, split into fields, with its header: what every reader of the file shares.
struct SplitFile {
  std::vector<std::string> header;
  size_t header_line = 1;
  bool tab = false;
  std::vector<std::pair<size_t, std::vector<std::string>>> rows;  // (line number, fields), blank lines dropped
};

SplitFile split_file(const std::filesystem::path& file) {
  std::string text =
      read_input_file(file, {"response file", "the path of a CSV or TSV file of responses", kMaxResponseFileBytes});
  // A UTF-8 byte order mark (spreadsheets write one) is not part of the first name.
  const std::string byte_order_mark = "\xEF\xBB\xBF";
  if (text.compare(0, byte_order_mark.size(), byte_order_mark) == 0) text.erase(0, byte_order_mark.size());
  require_text(file, text);

  std::vector<std::pair<size_t, std::string>> lines;  // (line number, content), blank lines dropped
  {
    std::istringstream in(text);
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (trimmed(line).empty()) continue;
      lines.emplace_back(number, line);
    }
  }
  if (lines.empty())
    throw UserError(file.string() + ": empty file. Fix: a header of item names, then one row of responses per person");

  SplitFile split_lines;
  split_lines.tab = file.extension() == ".tsv" || lines.front().second.find('\t') != std::string::npos;
  const char delimiter = split_lines.tab ? '\t' : ',';
  split_lines.header = split(file, lines.front().first, lines.front().second, delimiter);
  split_lines.header_line = lines.front().first;
  for (size_t row = 1; row < lines.size(); ++row) {
    const auto& [number, line] = lines[row];
    auto fields = split(file, number, line, delimiter);
    if (fields.size() != split_lines.header.size())
      throw UserError(where(file, number, 1) + ": " + std::to_string(fields.size()) + " fields, the header has " +
                      std::to_string(split_lines.header.size()) + ". Fix: one field per header column on every line" +
                      (split_lines.tab ? " (tab-separated)" : " (comma-separated)"));
    split_lines.rows.emplace_back(number, std::move(fields));
  }
  return split_lines;
}

// The header column named `name` (`option` names the flag that gave it); none for an empty name.
std::optional<size_t> named_column(const std::filesystem::path& file, const SplitFile& split_lines,
                                   const std::string& name, const std::string& option) {
  if (name.empty()) return std::nullopt;
  for (size_t c = 0; c < split_lines.header.size(); ++c)
    if (split_lines.header[c] == name) return c;
  throw UserError(where(file, split_lines.header_line, 1) + ": no column named '" + name +
                  "' in the header. Fix: give " + option + " one of the header's names, or leave it out");
}

// Where the person ids are and which columns hold items.
struct Layout {
  std::optional<size_t> id_index;
  std::vector<size_t> item_columns;
  std::vector<std::string> item_names;
};

Layout layout_of(const std::filesystem::path& file, const SplitFile& split_lines, const std::string& id_column,
                 std::optional<size_t> group_index) {
  const auto& header = split_lines.header;
  Layout layout;
  layout.id_index = named_column(file, split_lines, id_column, "--id-column");
  if (id_column.empty())
    for (size_t c = 0; c < header.size(); ++c)
      if (is_id_name(header[c]) && c != group_index) {
        layout.id_index = c;
        break;
      }
  std::set<std::string> seen;
  for (size_t c = 0; c < header.size(); ++c) {
    if (c == layout.id_index || c == group_index) continue;
    if (header[c].empty())
      throw UserError(where(file, split_lines.header_line, c + 1) +
                      ": an empty item name in the header. Fix: name every item column");
    if (!seen.insert(header[c]).second)
      throw UserError(where(file, split_lines.header_line, c + 1) + ": item '" + header[c] +
                      "' appears twice in the header. Fix: give each item column its own name");
    layout.item_columns.push_back(c);
    layout.item_names.push_back(header[c]);
  }
  if (layout.item_columns.empty())
    throw UserError(where(file, split_lines.header_line, 1) +
                    ": no item columns in the header. Fix: a header of item names (and optionally an id column)");
  return layout;
}

// The matrix of the rows with these indices into split_lines.rows.
ResponseMatrix matrix_of_rows(const std::filesystem::path& file, const SplitFile& split_lines, const Layout& layout,
                              const std::vector<size_t>& rows, const ResponseFormat& format, const std::string& what) {
  ResponseMatrix matrix;
  matrix.source = file.string();
  matrix.item_names = layout.item_names;
  const size_t persons = rows.size();
  if (persons < 2)
    throw UserError(what + ": " + std::to_string(persons) +
                    " person(s); the posterior needs at least two. Fix: one row of responses per person");
  const auto& item_columns = layout.item_columns;
  const std::string categories = "0.." + std::to_string(format.n_categories - 1);
  std::vector<float> values, observed;
  values.reserve(persons * item_columns.size());
  observed.reserve(persons * item_columns.size());
  for (const size_t row : rows) {
    const auto& [number, fields] = split_lines.rows[row];
    if (layout.id_index) matrix.person_ids.push_back(fields[*layout.id_index]);
    for (size_t k = 0; k < item_columns.size(); ++k) {
      const std::string& value = fields[item_columns[k]];
      const std::string cell = where(file, number, item_columns[k] + 1) + " (item '" + matrix.item_names[k] + "')";
      if (value.empty() || lowercase(value) == "na") {
        if (!format.missing_allowed)
          throw UserError(cell + ": a missing response; this model trained on complete responses. Fix: fill the "
                                 "cell with a response " + categories + ", drop the person or the item, or train "
                                 "a model on missing responses (simulator.missing, e.g. [0, 0.2])");
        values.push_back(0.0f);
        observed.push_back(0.0f);
        continue;
      }
      const bool digits = value.size() <= 3 && std::all_of(value.begin(), value.end(), [](unsigned char c) {
        return std::isdigit(c);
      });
      const int category = digits ? std::stoi(value) : -1;
      if (category < 0 || category >= format.n_categories)
        throw UserError(cell + ": '" + value + "' is not a response of this model. Fix: " +
                        (!format.responses.empty() ? format.responses
                         : format.n_categories > 2 ? "an integer " + categories + " (the model's " +
                                                         std::to_string(format.n_categories) + " categories, lowest 0)"
                                                   : "an integer " + categories) +
                        (format.missing_allowed ? ", or an empty cell or NA where the response is missing" : ""));
      values.push_back(static_cast<float>(category));
      observed.push_back(1.0f);
    }
  }
  const auto shape = std::vector<int64_t>{static_cast<int64_t>(persons), static_cast<int64_t>(item_columns.size())};
  matrix.responses = torch::tensor(values).reshape(shape);
  matrix.mask = torch::tensor(observed).reshape(shape);
  return matrix;
}

}  // namespace

ResponseMatrix read_response_matrix(const std::filesystem::path& file, const std::string& id_column,
                                    const ResponseFormat& format) {
  const SplitFile split_lines = split_file(file);
  const Layout layout = layout_of(file, split_lines, id_column, std::nullopt);
  std::vector<size_t> rows(split_lines.rows.size());
  for (size_t row = 0; row < rows.size(); ++row) rows[row] = row;
  return matrix_of_rows(file, split_lines, layout, rows, format, file.string());
}

std::vector<ResponseGroup> read_response_groups(const std::filesystem::path& file, const std::string& id_column,
                                                const std::string& group_column, const ResponseFormat& format) {
  const SplitFile split_lines = split_file(file);
  const size_t group_index = *named_column(file, split_lines, group_column, "--group-column");
  const Layout layout = layout_of(file, split_lines, id_column, group_index);
  std::vector<std::string> names;
  std::map<std::string, std::vector<size_t>> rows_of;
  for (size_t row = 0; row < split_lines.rows.size(); ++row) {
    const auto& [number, fields] = split_lines.rows[row];
    const std::string& group = fields[group_index];
    if (group.empty())
      throw UserError(where(file, number, group_index + 1) + ": an empty " + group_column +
                      ". Fix: give every person a value of " + group_column + " (the data set it belongs to)");
    auto& rows = rows_of[group];
    if (rows.empty()) names.push_back(group);
    rows.push_back(row);
  }
  std::vector<ResponseGroup> groups;
  for (const auto& name : names) {
    ResponseGroup group{name, std::nullopt, ""};
    try {
      group.matrix = matrix_of_rows(file, split_lines, layout, rows_of[name], format,
                                    file.string() + " (" + group_column + " " + name + ")");
    } catch (const UserError& error) {
      group.error = error.what();
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace bfhpo::inference
