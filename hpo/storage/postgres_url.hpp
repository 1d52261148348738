// PostgreSQL URLs as a study's "storage" names them:
//   postgresql://USER:PASSWORD@HOST:PORT/DATABASE[?key=value&...]
// (also postgres://, as libpq and SQLAlchemy accept). Nothing bfhpo prints or
// stores shows a password: a URL is printed as redacted_postgres_url gives
// it, a study's storage as printable_storage gives it, and a message of
// libpq's (which may echo the URL, or pieces of it when it cannot parse it)
// as without_url_secrets gives it.
//
// The secrets of a URL: the password of its user part, which runs from the
// first ':' after "://" to the LAST '@' (an unencoded password may hold '@',
// '/', ':' or '?'), and the values of its password= and sslpassword= query
// parameters (keys percent-decoded, as libpq reads them). When that cannot be
// told apart from an '@' in the query, more than the password is hidden,
// never less.
#pragma once

#include <string>

namespace bfhpo::hpo {

// True for a postgresql:// or postgres:// URL (and for SQLAlchemy's
// postgresql+psycopg2:// form, which bfhpo reads as postgresql://).
bool is_postgres_url(const std::string& storage);

// The URL libpq understands: a SQLAlchemy driver suffix ("+psycopg2") dropped.
std::string libpq_url(const std::string& url);

// The URL with each of its secrets replaced by "***".
std::string redacted_postgres_url(const std::string& url);

// A study's storage as messages and outputs name it: a PostgreSQL URL
// redacted, a journal path as it is.
std::string printable_storage(const std::string& storage);

// `text` with each occurrence of the URL (as given and as libpq_url gives it)
// redacted, and elsewhere every secret of the URL, and every piece of one
// between the URL's delimiters (/ @ : ? & =), as written and percent-decoded,
// replaced by "***".
std::string without_url_secrets(const std::string& text, const std::string& url);

}  // namespace bfhpo::hpo
