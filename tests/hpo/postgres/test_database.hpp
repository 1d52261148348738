// A fresh, empty PostgreSQL database for one test, on the server whose URL
// scripts/with-postgres exports as BFHPO_TEST_POSTGRES_URL; dropped at the end.
#pragma once

#include "hpo/storage/postgres_connection.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bfhpo::hpo::testing {

inline std::string admin_url() {
  const char* url = std::getenv("BFHPO_TEST_POSTGRES_URL");
  if (!url || !*url) throw std::runtime_error("BFHPO_TEST_POSTGRES_URL is not set (run under scripts/with-postgres)");
  return url;
}

// The admin URL with its database replaced by `database`.
inline std::string url_of_database(const std::string& database) {
  const std::string admin = admin_url();
  const std::size_t slash = admin.rfind('/');
  return admin.substr(0, slash + 1) + database;
}

class TestDatabase {
 public:
  TestDatabase() : name_("bfhpo_test_" + std::to_string(::getpid()) + "_" + std::to_string(next_id()++)) {
    PostgresConnection admin(admin_url());
    admin.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    admin.exec("CREATE DATABASE " + name_);
  }
  ~TestDatabase() {
    try {
      PostgresConnection admin(admin_url());
      admin.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (...) {
      // The server may be gone already; scripts/with-postgres removes it all.
    }
  }
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& name() const { return name_; }
  std::string url() const { return url_of_database(name_); }

 private:
  static std::atomic<int>& next_id() {
    static std::atomic<int> id{0};
    return id;
  }
  std::string name_;
};

}  // namespace bfhpo::hpo::testing
