#include "hpo/storage/postgres_connection.hpp"

#include "common/user_error.hpp"
#include "test_database.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

using namespace bfhpo::hpo;
using bfhpo::hpo::testing::TestDatabase;
using bfhpo::hpo::testing::url_of_database;

namespace {

std::string password_of(const std::string& url) {
  const std::size_t colon = url.find(':', url.find("://") + 3);
  return url.substr(colon + 1, url.rfind('@') - colon - 1);
}

std::string with_password(const std::string& url, const std::string& password) {
  const std::size_t colon = url.find(':', url.find("://") + 3);
  return url.substr(0, colon + 1) + password + url.substr(url.rfind('@'));
}

std::string user_error_of(const std::string& url) {
  try {
    PostgresConnection connection(url, PostgresOptions{1, 2});
  } catch (const bfhpo::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("doubles and NULLs round-trip through parameters and text results") {
  TestDatabase db;
  PostgresConnection connection(db.url());
  connection.exec("CREATE TABLE t (x DOUBLE PRECISION)");
  const double values[] = {0.1, 1.0 / 3.0, 1e-300, -2.5e300, std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::infinity()};
  for (double v : values) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    connection.exec("INSERT INTO t VALUES ($1)", {std::isinf(v) ? std::string("Infinity") : std::string(text)});
  }
  connection.exec("INSERT INTO t VALUES ($1)", {std::nullopt});
  const PostgresResult rows = connection.exec("SELECT x FROM t");
  REQUIRE(rows.rows() == 7);
  for (int i = 0; i < 6; ++i) CHECK(rows.real(i, 0) == values[i]);  // exact: shortest round-trip text
  CHECK(rows.is_null(6, 0));
}

TEST_CASE("a transaction that throws leaves nothing behind") {
  TestDatabase db;
  PostgresConnection connection(db.url());
  connection.exec("CREATE TABLE t (x INTEGER)");
  REQUIRE_THROWS_AS(connection.transaction([&](bool) {
    connection.exec("INSERT INTO t VALUES (1)");
    throw std::runtime_error("changed my mind");
  }), std::runtime_error);
  CHECK(connection.exec("SELECT count(*) FROM t").integer(0, 0) == 0);
  connection.transaction([&](bool) { connection.exec("INSERT INTO t VALUES (2)"); });
  CHECK(connection.exec("SELECT count(*) FROM t").integer(0, 0) == 1);
}

TEST_CASE("a terminated backend is reconnected and the transaction rerun once, told it is a retry") {
  TestDatabase db;
  PostgresConnection connection(db.url());
  PostgresConnection killer(db.url());
  connection.exec("CREATE TABLE t (x INTEGER)");
  int runs = 0;
  bool saw_retry = false;
  connection.transaction([&](bool retried) {
    ++runs;
    saw_retry = saw_retry || retried;
    connection.exec("INSERT INTO t VALUES (1)");
    if (runs == 1) {
      const std::string pid = connection.exec("SELECT pg_backend_pid()").text(0, 0);
      killer.exec("SELECT pg_terminate_backend($1::int)", {pid});
    }
  });
  CHECK(runs == 2);
  CHECK(saw_retry);
  CHECK(connection.reconnects() == 1);
  CHECK(connection.exec("SELECT count(*) FROM t").integer(0, 0) == 1);  // the first run rolled back

  // A single statement outside a transaction recovers the same way.
  killer.exec("SELECT pg_terminate_backend($1::int)", {connection.exec("SELECT pg_backend_pid()").text(0, 0)});
  CHECK(connection.exec("SELECT count(*) FROM t").integer(0, 0) == 1);
  CHECK(connection.reconnects() == 2);
}

TEST_CASE("connection errors are UserErrors naming the URL without its password, and the fix") {
  TestDatabase db;
  const std::string password = password_of(db.url());
  REQUIRE(password.size() >= 8);

  const std::string wrong_password = user_error_of(with_password(db.url(), "not-" + password));
  CHECK_THAT(wrong_password, Catch::Contains("password authentication failed"));
  CHECK_THAT(wrong_password, Catch::Contains("correct the user and password"));
  CHECK_THAT(wrong_password, Catch::Contains(":***@"));
  CHECK(wrong_password.find(password) == std::string::npos);

  const std::string no_database = user_error_of(url_of_database("bfhpo_no_such_database"));
  CHECK_THAT(no_database, Catch::Contains("bfhpo_no_such_database"));
  CHECK_THAT(no_database, Catch::Contains("createdb"));
  CHECK(no_database.find(password) == std::string::npos);

  const std::string refused = user_error_of("postgresql://bfhpo:" + password + "@127.0.0.1:1/x");
  CHECK_THAT(refused, Catch::Contains("postgresql://bfhpo:***@127.0.0.1:1/x"));
  CHECK_THAT(refused, Catch::Contains("start PostgreSQL"));
  CHECK(refused.find(password) == std::string::npos);
}

TEST_CASE("a connection that cannot be restored within the window is a UserError after it, naming the URL") {
  auto db = std::make_unique<TestDatabase>();
  const std::string url = db->url();
  PostgresConnection connection(url, PostgresOptions{1.0, 2.0});
  connection.exec("SELECT 1");
  db.reset();  // DROP DATABASE ... WITH (FORCE): the backend is terminated and the database is gone
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    connection.exec("SELECT 1");
  } catch (const bfhpo::UserError& e) {
    message = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_THAT(message, Catch::Contains("could not restore it within 1 s") && Catch::Contains(":***@") &&
                          Catch::Contains("re-queued on resume"));
  CHECK(message.find(password_of(url)) == std::string::npos);
  CHECK(waited >= 1.0);
  CHECK(waited < 10.0);
}

TEST_CASE("a transaction whose COMMIT went through but whose answer was lost is not run again") {
  TestDatabase db;
  PostgresConnection admin(db.url());
  // A COMMIT that waits for a standby that never comes: the transaction is
  // committed on the server, then its backend is terminated before it answers.
  struct WaitForAStandby {
    explicit WaitForAStandby(PostgresConnection& admin) : admin(admin) {
      admin.exec("ALTER SYSTEM SET synchronous_standby_names = 'bfhpo_no_such_standby'");
      admin.exec("SELECT pg_reload_conf()");
      // The reload is a signal the server handles when it gets to it: a connection opened before then
      // would commit without waiting. A backend shows the setting once the server has passed it on.
      for (int tries = 0; tries < 500; ++tries) {
        if (admin.exec("SHOW synchronous_standby_names").text(0, 0) == "bfhpo_no_such_standby") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ~WaitForAStandby() {
      admin.exec("ALTER SYSTEM RESET synchronous_standby_names");
      admin.exec("SELECT pg_reload_conf()");
    }
    PostgresConnection& admin;
  } standby(admin);
  PostgresConnection connection(db.url(), PostgresOptions{5, 2});
  connection.exec("CREATE TABLE t (x INTEGER)");
  int runs = 0;
  std::atomic<bool> finished{false};
  std::thread terminator([&] {  // every COMMIT that waits for the standby loses its connection
    while (!finished) {
      admin.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE wait_event = 'SyncRep' AND datname = current_database()");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::string error;
  try {
    connection.transaction([&](bool) {
      ++runs;
      connection.exec("SET LOCAL synchronous_commit = on");
      connection.exec("INSERT INTO t VALUES (1)");
    });
  } catch (const bfhpo::UserError& e) {
    error = e.what();  // run again and again, each COMMIT cut, until the reconnect window closed
  }
  finished = true;
  terminator.join();
  CHECK(error.empty());
  CHECK(runs == 1);
  CHECK(connection.reconnects() == 1);
  CHECK(connection.exec("SELECT count(*) FROM t").integer(0, 0) == 1);
}
