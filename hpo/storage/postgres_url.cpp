#include "hpo/storage/postgres_url.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>

namespace bfhpo::hpo {
namespace {

struct Span {
  std::size_t begin;
  std::size_t end;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// %XX sequences decoded; a malformed one kept as written.
std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 && hex_digit(text[i + 2]) >= 0) {
      decoded += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Where the URL's secrets are (see the header), in order, overlaps merged.
std::vector<Span> secret_spans(const std::string& url) {
  std::vector<Span> spans;
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return spans;
  const std::size_t authority = scheme_end + 3;
  const std::size_t at = url.rfind('@');
  if (at != std::string::npos && at >= authority) {
    const std::size_t colon = url.find(':', authority);
    if (colon < at) spans.push_back({colon + 1, at});
  }
  for (std::size_t mark = url.find_first_of("?&", authority); mark != std::string::npos;
       mark = url.find_first_of("?&", mark + 1)) {
    const std::size_t key_end = url.find_first_of("=&", mark + 1);
    if (key_end == std::string::npos || url[key_end] != '=') continue;
    const std::string key = lowercase(percent_decoded(url.substr(mark + 1, key_end - mark - 1)));
    if (key != "password" && key != "sslpassword") continue;
    spans.push_back({key_end + 1, std::min(url.find('&', key_end + 1), url.size())});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span& span : spans) {
    if (!merged.empty() && span.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, span.end);
    else
      merged.push_back(span);
  }
  return merged;
}

void replace_all(std::string& text, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
}

// A secret, decoded, and its pieces between the URL's delimiters: what libpq
// may echo of it.
std::vector<std::string> secret_forms(const std::string& secret) {
  std::vector<std::string> forms;
  for (const std::string& whole : {secret, percent_decoded(secret)}) {
    forms.push_back(whole);
    std::size_t begin = 0;
    for (std::size_t end = 0; end <= whole.size(); ++end) {
      if (end < whole.size() && std::string("/@:?&=").find(whole[end]) == std::string::npos) continue;
      if (end > begin) forms.push_back(whole.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  // The longest first, so that no piece of a longer form is left behind.
  std::sort(forms.begin(), forms.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return forms;
}

}  // namespace

bool is_postgres_url(const std::string& storage) {
  static const std::regex scheme(R"(^postgres(ql)?(\+[A-Za-z0-9_]+)?://)", std::regex::icase);
  return std::regex_search(storage, scheme);
}

std::string libpq_url(const std::string& url) {
  static const std::regex driver(R"(^(postgres(ql)?)\+[A-Za-z0-9_]+://)", std::regex::icase);
  return std::regex_replace(url, driver, "$1://", std::regex_constants::format_first_only);
}

std::string redacted_postgres_url(const std::string& url) {
  std::string redacted;
  std::size_t from = 0;
  for (const Span& span : secret_spans(url)) {
    redacted += url.substr(from, span.begin - from) + "***";
    from = span.end;
  }
  return redacted + url.substr(from);
}

std::string printable_storage(const std::string& storage) {
  return is_postgres_url(storage) ? redacted_postgres_url(storage) : storage;
}

std::string without_url_secrets(const std::string& text, const std::string& url) {
  for (const std::string& whole : {url, libpq_url(url)}) {
    const std::size_t at = whole.empty() ? std::string::npos : text.find(whole);
    if (at != std::string::npos)
      return without_url_secrets(text.substr(0, at), url) + redacted_postgres_url(url) +
             without_url_secrets(text.substr(at + whole.size()), url);
  }
  std::string masked = text;
  for (const Span& span : secret_spans(url))
    for (const std::string& form : secret_forms(url.substr(span.begin, span.end - span.begin)))
      replace_all(masked, form, "***");
  return masked;
}

}  // namespace bfhpo::hpo
