// Numbers as a person reads them in bfhpo's output: a few significant
// digits, never "80.060875". Used by the live line, the summary, the status
// table, prune messages and the HTML report, so they all agree.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

namespace bfhpo {

// `significant` digits, without an exponent between 1e-4 and 1e6: 1.23456 ->
// "1.235", 0.000123 -> "0.000123", 1234567 -> "1.235e+06"; "-" for none.
inline std::string format_number(std::optional<double> value, int significant = 4) {
  if (!value) return "-";
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", significant, *value);
  return text;
}

// The shortest text that reads back as `value` exactly, for a number the
// user gave (messages quote it as given): 0.05 -> "0.05", 1e-07 -> "1e-07".
inline std::string format_exact(double value) {
  char text[40];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

// Megabytes with one decimal (two below 10 MB): "16.6 MB", "3.25 MB".
inline std::string format_mb(double mb) {
  char text[40];
  std::snprintf(text, sizeof text, std::fabs(mb) < 10 ? "%.2f MB" : "%.1f MB", mb);
  return text;
}

// Megabytes rounded up to a whole number, "803 MB": memory a refusal says is needed or there.
inline std::string format_whole_mb(double mb) {
  return std::to_string(static_cast<long long>(std::ceil(mb))) + " MB";
}

// `value` with `significant` digits as printf's "%.*g" writes it (and so an
// ostream at that precision), appended to `out`: the numbers of the CSV
// files infer writes, without a stream's cost a number.
inline void append_number(std::string& out, double value, int significant) {
  char text[40];
  out.append(text, std::to_chars(text, text + sizeof text, value, std::chars_format::general, significant).ptr);
}

// Durations: "0.8 s", "42 s", "3:07" (minutes:seconds), "1:02:03".
inline std::string format_duration(double seconds) {
  char text[40];
  if (seconds < 10) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else {
    const long s = std::lround(seconds);
    if (s < 3600) std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
    else std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  }
  return text;
}

}  // namespace bfhpo
