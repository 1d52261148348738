#include "hpo/storage/postgres_url.hpp"

#include <regex>

namespace bfhpo::hpo {

bool is_postgres_url(const std::string& storage) {
  static const std::regex scheme(R"(^postgres(ql)?(\+[A-Za-z0-9_]+)?://)", std::regex::icase);
  return std::regex_search(storage, scheme);
}

std::string libpq_url(const std::string& url) {
  static const std::regex driver(R"(^(postgres(ql)?)\+[A-Za-z0-9_]+://)", std::regex::icase);
  return std::regex_replace(url, driver, "$1://", std::regex_constants::format_first_only);
}

std::string redacted_postgres_url(const std::string& url) {
  // userinfo "user:password@" before the host; the last '@' of the authority
  // ends it, since a password may itself hold '@' when not percent-encoded.
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const std::size_t authority = scheme_end + 3;
  std::size_t authority_end = url.find_first_of("/?", authority);
  if (authority_end == std::string::npos) authority_end = url.size();
  std::string redacted = url;
  const std::size_t at = url.rfind('@', authority_end);
  if (at != std::string::npos && at >= authority) {
    const std::size_t colon = url.find(':', authority);
    if (colon != std::string::npos && colon < at)
      redacted = url.substr(0, colon + 1) + "***" + url.substr(at);
  }
  static const std::regex password_parameter(R"(([?&]password=)[^&]*)", std::regex::icase);
  return std::regex_replace(redacted, password_parameter, "$1***");
}

}  // namespace bfhpo::hpo
