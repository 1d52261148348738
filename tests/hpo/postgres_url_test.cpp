#include "hpo/storage/postgres_url.hpp"

#include <catch2/catch.hpp>

using namespace bfhpo::hpo;

TEST_CASE("PostgreSQL URLs are told from file paths") {
  CHECK(is_postgres_url("postgresql://u:p@h:5432/db"));
  CHECK(is_postgres_url("postgres://h/db"));
  CHECK(is_postgres_url("postgresql+psycopg2://u@h/db"));
  CHECK(is_postgres_url("POSTGRESQL://h/db"));
  CHECK_FALSE(is_postgres_url("study.journal"));
  CHECK_FALSE(is_postgres_url("runs/postgresql://x"));
  CHECK_FALSE(is_postgres_url("sqlite:///x.db"));
  CHECK(libpq_url("postgresql+psycopg2://u@h/db") == "postgresql://u@h/db");
  CHECK(libpq_url("postgres://u@h/db") == "postgres://u@h/db");
}

TEST_CASE("a redacted URL keeps everything but the password") {
  struct Case {
    const char* url;
    const char* redacted;
  };
  const Case cases[] = {
      {"postgresql://bob:s3cret@db.example:5432/hpo", "postgresql://bob:***@db.example:5432/hpo"},
      {"postgresql://bob:p@ss@word@host/hpo", "postgresql://bob:***@host/hpo"},
      {"postgresql://bob@host/hpo", "postgresql://bob@host/hpo"},
      {"postgresql://host:5432/hpo", "postgresql://host:5432/hpo"},
      {"postgresql://bob:s3cret@host", "postgresql://bob:***@host"},
      {"postgresql://host/hpo?user=bob&password=s3cret&sslmode=require",
       "postgresql://host/hpo?user=bob&password=***&sslmode=require"},
      {"postgresql://bob:s3cret@host/hpo?password=s3cret", "postgresql://bob:***@host/hpo?password=***"},
      // Unencoded passwords: the user part ends at the last '@'.
      {"postgresql://bob:s3/cret@host/hpo", "postgresql://bob:***@host/hpo"},
      {"postgresql://bob:s3@c/r?e:t@host:5432/hpo", "postgresql://bob:***@host:5432/hpo"},
      {"postgresql://bob:s3cret@[::1/hpo", "postgresql://bob:***@[::1/hpo"},
      {"postgres://host/hpo?sslpassword=s3cret&user=bob", "postgres://host/hpo?sslpassword=***&user=bob"},
      {"postgres://host/hpo?%70assword=s3cret", "postgres://host/hpo?%70assword=***"},
      {"postgresql://host:5432/hpo?password=s3@cret", "postgresql://host:***"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.url);
    CHECK(redacted_postgres_url(c.url) == c.redacted);
    CHECK(redacted_postgres_url(c.url).find("s3cret") == std::string::npos);
  }
}

TEST_CASE("a study's storage is printed with its password hidden, a journal path as it is") {
  CHECK(printable_storage("postgresql://bob:s3cret@host/hpo") == "postgresql://bob:***@host/hpo");
  CHECK(printable_storage("runs/a:b@c.journal") == "runs/a:b@c.journal");
}

TEST_CASE("libpq's messages lose the URL's secrets, whole or in pieces") {
  const std::string url = "postgresql://bob:s3cr/et@pa@host/hpo?sslpassword=k3y";
  // libpq reads "bob" as the host and "s3cr" as the port when the password holds an unencoded '/'.
  const std::string message = "invalid port number: \"s3cr\"; in URI: \"" + url + "\" (key k3y)";
  const std::string shown = without_url_secrets(message, url);
  CHECK(shown.find("s3cr") == std::string::npos);
  CHECK(shown.find("et@pa") == std::string::npos);
  CHECK(shown.find("k3y") == std::string::npos);
  CHECK(shown.find("postgresql://bob:***@host/hpo?sslpassword=***") != std::string::npos);
  CHECK(without_url_secrets("could not connect to server", url) == "could not connect to server");
}
