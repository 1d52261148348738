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
  };
  for (const auto& c : cases) {
    CAPTURE(c.url);
    CHECK(redacted_postgres_url(c.url) == c.redacted);
    CHECK(redacted_postgres_url(c.url).find("s3cret") == std::string::npos);
  }
}
