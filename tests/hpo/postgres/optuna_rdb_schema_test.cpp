#include "hpo/storage/optuna_rdb_schema.hpp"

#include "common/user_error.hpp"
#include "test_database.hpp"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

using namespace bfhpo::hpo;
using bfhpo::hpo::testing::TestDatabase;

namespace {

std::vector<std::string> tables_of(PostgresConnection& connection) {
  const PostgresResult rows = connection.exec(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1");
  std::vector<std::string> names;
  for (int i = 0; i < rows.rows(); ++i) names.push_back(rows.text(i, 0));
  return names;
}

std::string user_error_of(PostgresConnection& connection, bool create = true) {
  try {
    ensure_optuna_schema(connection, create);
  } catch (const bfhpo::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an empty database gets Optuna's v3.2.0.a schema, once, even with racing workers") {
  TestDatabase db;
  std::vector<std::string> versions(4);
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i)
    workers.emplace_back([&, i] {
      PostgresConnection connection(db.url());
      versions[i] = ensure_optuna_schema(connection, true);
    });
  for (auto& w : workers) w.join();
  for (const auto& v : versions) CHECK(v == "v3.2.0.a");

  PostgresConnection connection(db.url());
  CHECK(tables_of(connection) ==
        std::vector<std::string>{"alembic_version", "studies", "study_directions", "study_system_attributes",
                                 "study_user_attributes", "trial_heartbeats", "trial_intermediate_values",
                                 "trial_params", "trial_system_attributes", "trial_user_attributes", "trial_values",
                                 "trials", "version_info"});
  CHECK(connection.exec("SELECT count(*) FROM alembic_version").integer(0, 0) == 1);
  CHECK(connection.exec("SELECT schema_version FROM version_info").integer(0, 0) == 12);
  CHECK(connection.exec("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_trials_study_id'").integer(0, 0) == 1);
  CHECK(ensure_optuna_schema(connection, false) == "v3.2.0.a");
}

TEST_CASE("a schema at v3.0.0.d is used as it is") {
  TestDatabase db;
  PostgresConnection connection(db.url());
  ensure_optuna_schema(connection, true);
  connection.exec("DROP INDEX ix_trials_study_id");
  connection.exec("UPDATE alembic_version SET version_num = 'v3.0.0.d'");
  CHECK(ensure_optuna_schema(connection, true) == "v3.0.0.d");
  CHECK(connection.exec("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_trials_study_id'").integer(0, 0) == 0);
}

TEST_CASE("another tool's tables, an unknown version or missing tables: UserError, nothing written") {
  TestDatabase db;
  PostgresConnection connection(db.url());

  SECTION("another tool's tables") {
    connection.exec("CREATE TABLE users (id INTEGER)");
    const std::string message = user_error_of(connection);
    CHECK_THAT(message, Catch::Contains("another tool") && Catch::Contains("users") &&
                            Catch::Contains("database of its own") && Catch::Contains(":***@"));
    CHECK(tables_of(connection) == std::vector<std::string>{"users"});
  }
  SECTION("an unknown schema version") {
    ensure_optuna_schema(connection, true);
    connection.exec("UPDATE alembic_version SET version_num = 'v9.0.0.a'");
    CHECK_THAT(user_error_of(connection), Catch::Contains("'v9.0.0.a' is not one bfhpo knows"));
    connection.exec("UPDATE alembic_version SET version_num = 'v2.6.0.a'");
    CHECK_THAT(user_error_of(connection), Catch::Contains("optuna storage upgrade"));
    CHECK(connection.exec("SELECT version_num FROM alembic_version").text(0, 0) == "v2.6.0.a");
  }
  SECTION("Optuna's tables partly missing") {
    ensure_optuna_schema(connection, true);
    connection.exec("DROP TABLE trial_heartbeats");
    CHECK_THAT(user_error_of(connection), Catch::Contains("lacks the tables trial_heartbeats"));
  }
  SECTION("an empty database opened only to read") {
    CHECK_THAT(user_error_of(connection, false), Catch::Contains("no Optuna study yet"));
    CHECK(tables_of(connection).empty());
  }
}
