// PostgreSQL URLs as a study's "storage" names them:
//   postgresql://USER:PASSWORD@HOST:PORT/DATABASE[?key=value&...]
// (also postgres://, as libpq and SQLAlchemy accept). Messages never show a
// password: they name the URL as redacted_postgres_url gives it.
#pragma once

#include <string>

namespace bfhpo::hpo {

// True for a postgresql:// or postgres:// URL (and for SQLAlchemy's
// postgresql+psycopg2:// form, which bfhpo reads as postgresql://).
bool is_postgres_url(const std::string& storage);

// The URL libpq understands: a SQLAlchemy driver suffix ("+psycopg2") dropped.
std::string libpq_url(const std::string& url);

// The URL with its password (in the user part and in a password= query
// parameter) replaced by "***".
std::string redacted_postgres_url(const std::string& url);

}  // namespace bfhpo::hpo
