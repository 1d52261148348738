#include "hpo/storage/optuna_rdb_schema.hpp"

#include "common/user_error.hpp"

#include <algorithm>
#include <set>
#include <vector>

namespace bfhpo::hpo {
namespace {

// The statements SQLAlchemy's metadata.create_all(engine) sends to PostgreSQL
// for Optuna's models (checked table for table against pg_dump of a database
// Optuna 5 created: tests/hpo/postgres/schema_test compares with Optuna 3.1's).
const char* const kCreateSchema[] = {
    "CREATE TYPE studydirection AS ENUM ('NOT_SET', 'MINIMIZE', 'MAXIMIZE')",
    "CREATE TYPE trialstate AS ENUM ('RUNNING', 'COMPLETE', 'PRUNED', 'FAIL', 'WAITING')",
    "CREATE TYPE trialvaluetype AS ENUM ('FINITE', 'INF_POS', 'INF_NEG')",
    "CREATE TYPE trialintermediatevaluetype AS ENUM ('FINITE', 'INF_POS', 'INF_NEG', 'NAN')",
    "CREATE TABLE studies (study_id SERIAL NOT NULL, study_name VARCHAR(512) NOT NULL, PRIMARY KEY (study_id))",
    "CREATE UNIQUE INDEX ix_studies_study_name ON studies (study_name)",
    "CREATE TABLE version_info (version_info_id INTEGER NOT NULL, schema_version INTEGER, "
    "library_version VARCHAR(256), PRIMARY KEY (version_info_id), CHECK (version_info_id=1))",
    "CREATE TABLE study_directions (study_direction_id SERIAL NOT NULL, direction studydirection NOT NULL, "
    "study_id INTEGER NOT NULL, objective INTEGER NOT NULL, PRIMARY KEY (study_direction_id), "
    "UNIQUE (study_id, objective), FOREIGN KEY(study_id) REFERENCES studies (study_id))",
    "CREATE TABLE study_user_attributes (study_user_attribute_id SERIAL NOT NULL, study_id INTEGER, "
    "key VARCHAR(512), value_json TEXT, PRIMARY KEY (study_user_attribute_id), UNIQUE (study_id, key), "
    "FOREIGN KEY(study_id) REFERENCES studies (study_id))",
    "CREATE TABLE study_system_attributes (study_system_attribute_id SERIAL NOT NULL, study_id INTEGER, "
    "key VARCHAR(512), value_json TEXT, PRIMARY KEY (study_system_attribute_id), UNIQUE (study_id, key), "
    "FOREIGN KEY(study_id) REFERENCES studies (study_id))",
    "CREATE TABLE trials (trial_id SERIAL NOT NULL, number INTEGER, study_id INTEGER, state trialstate NOT NULL, "
    "datetime_start TIMESTAMP WITHOUT TIME ZONE, datetime_complete TIMESTAMP WITHOUT TIME ZONE, "
    "PRIMARY KEY (trial_id), FOREIGN KEY(study_id) REFERENCES studies (study_id))",
    "CREATE INDEX ix_trials_study_id ON trials (study_id)",
    "CREATE TABLE trial_user_attributes (trial_user_attribute_id SERIAL NOT NULL, trial_id INTEGER, "
    "key VARCHAR(512), value_json TEXT, PRIMARY KEY (trial_user_attribute_id), UNIQUE (trial_id, key), "
    "FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    "CREATE TABLE trial_system_attributes (trial_system_attribute_id SERIAL NOT NULL, trial_id INTEGER, "
    "key VARCHAR(512), value_json TEXT, PRIMARY KEY (trial_system_attribute_id), UNIQUE (trial_id, key), "
    "FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    "CREATE TABLE trial_params (param_id SERIAL NOT NULL, trial_id INTEGER, param_name VARCHAR(512), "
    "param_value FLOAT(53), distribution_json TEXT, PRIMARY KEY (param_id), UNIQUE (trial_id, param_name), "
    "FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    "CREATE TABLE trial_values (trial_value_id SERIAL NOT NULL, trial_id INTEGER NOT NULL, "
    "objective INTEGER NOT NULL, value FLOAT(53), value_type trialvaluetype NOT NULL, "
    "PRIMARY KEY (trial_value_id), UNIQUE (trial_id, objective), FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    "CREATE TABLE trial_intermediate_values (trial_intermediate_value_id SERIAL NOT NULL, "
    "trial_id INTEGER NOT NULL, step INTEGER NOT NULL, intermediate_value FLOAT(53), "
    "intermediate_value_type trialintermediatevaluetype NOT NULL, PRIMARY KEY (trial_intermediate_value_id), "
    "UNIQUE (trial_id, step), FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    "CREATE TABLE trial_heartbeats (trial_heartbeat_id SERIAL NOT NULL, trial_id INTEGER NOT NULL, "
    "heartbeat TIMESTAMP WITHOUT TIME ZONE NOT NULL, PRIMARY KEY (trial_heartbeat_id), UNIQUE (trial_id), "
    "FOREIGN KEY(trial_id) REFERENCES trials (trial_id))",
    // Optuna's _VersionManager: version_info at SCHEMA_VERSION 12, alembic stamped at its head.
    "INSERT INTO version_info (version_info_id, schema_version, library_version) VALUES (1, 12, 'bfhpo')",
    "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))",
};

const std::vector<std::string> kOptunaTables = {
    "alembic_version",       "studies",                   "study_directions",
    "study_system_attributes", "study_user_attributes",   "trial_heartbeats",
    "trial_intermediate_values", "trial_params",          "trial_system_attributes",
    "trial_user_attributes", "trial_values",              "trials",
    "version_info"};

const std::set<std::string> kKnownVersions = {"v3.0.0.d", "v3.2.0.a"};

// Any number fits: it only has to be the same in every bfhpo process.
constexpr const char* kSchemaLockKey = "4206202612";

std::string joined(const std::vector<std::string>& names, std::size_t at_most) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < at_most; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > at_most) text += ", ...";
  return text;
}

}  // namespace

std::string ensure_optuna_schema(PostgresConnection& connection, bool create) {
  return connection.transaction([&](bool) {
    connection.exec("SELECT pg_advisory_xact_lock($1)", {std::string(kSchemaLockKey)});
    const std::string& where = connection.location();
    if (connection.exec("SELECT current_schema()").is_null(0, 0))
      throw UserError::at(where, "storage",
                          "no schema of the search_path exists (the URL's options=-c search_path=..., or the "
                          "user's or database's setting), so Optuna's tables can be neither found nor created",
                          "create that schema (CREATE SCHEMA name) or name an existing one in search_path");
    const PostgresResult listed = connection.exec(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "ORDER BY table_name");
    std::vector<std::string> tables;
    for (int row = 0; row < listed.rows(); ++row) tables.push_back(listed.text(row, 0));
    const auto has = [&](const std::string& table) {
      return std::find(tables.begin(), tables.end(), table) != tables.end();
    };

    if (tables.empty()) {
      if (!create)
        throw UserError::at(where, "storage", "the database holds no Optuna study yet",
                            "run `bfhpo ask` or `bfhpo optimize` with this storage first");
      for (const char* statement : kCreateSchema) connection.exec(statement);
      connection.exec("INSERT INTO alembic_version (version_num) VALUES ($1)", {std::string(kOptunaSchemaCreated)});
      return std::string(kOptunaSchemaCreated);
    }
    if (!has("alembic_version"))
      throw UserError::at(where, "storage",
                          "the database holds tables of another tool (" + joined(tables, 5) +
                              "), not Optuna's RDB schema; bfhpo writes nothing there",
                          "give the study a database of its own (createdb -h HOST -U USER NAME) or one that "
                          "Optuna created");
    const PostgresResult version = connection.exec("SELECT version_num FROM alembic_version");
    const std::string found = version.rows() == 1 ? version.text(0, 0) : "";
    if (!kKnownVersions.count(found))
      throw UserError::at(where, "storage",
                          "Optuna schema version '" + found + "' is not one bfhpo knows (v3.0.0.d, v3.2.0.a)",
                          found < std::string("v3.0.0.d")
                              ? "upgrade the database with `optuna storage upgrade --storage URL` (Optuna 3.x)"
                              : "use a database that Optuna 3.0 to 5.0 created, or a newer bfhpo");
    std::vector<std::string> missing;
    for (const auto& table : kOptunaTables)
      if (!has(table)) missing.push_back(table);
    if (!missing.empty())
      throw UserError::at(where, "storage",
                          "Optuna's schema " + found + " lacks the tables " + joined(missing, 5),
                          "repair it with Optuna (`optuna storage upgrade --storage URL`) or use another database");
    return found;
  });
}

}  // namespace bfhpo::hpo
