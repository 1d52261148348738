// One field of a CSV file as RFC 4180 writes it: as is, or, when it holds a
// comma, a double quote, CR or LF, in double quotes with each quote doubled,
// so a reader (Python's csv, R's read.csv, a spreadsheet) gets it back whole.
#pragma once

#include <string>

namespace bfhpo {

inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace bfhpo
