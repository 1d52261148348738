// Optuna's RDB schema (optuna/storages/_rdb/models.py) in a PostgreSQL
// database: the tables Optuna's RDBStorage and optuna-dashboard read.
//
// Versions bfhpo reads and writes (alembic_version.version_num):
//   v3.0.0.d  what Optuna 3.0 / 3.1 create (Debian 12's python3-optuna);
//   v3.2.0.a  what Optuna >= 3.2 create: v3.0.0.d plus an index on
//             trials.study_id. bfhpo creates this one in an empty database,
//             table for table, column for column, as Optuna's create_all
//             does, so `optuna.load_study(storage=URL)` of Optuna >= 3.2
//             opens it with no upgrade. (Optuna 3.0 / 3.1 refuse a v3.2.0.a
//             database, as they refuse one a newer Optuna made; let the older
//             Optuna create the schema first and bfhpo uses it as it is.)
#pragma once

#include "hpo/storage/postgres_connection.hpp"

#include <string>

namespace bfhpo::hpo {

inline constexpr const char* kOptunaSchemaCreated = "v3.2.0.a";
// Characters a study's name, a param's name or an attribute's key may have (VARCHAR(512)).
inline constexpr std::size_t kOptunaNameCharacters = 512;

// Makes sure `connection`'s database holds Optuna's schema, in one
// transaction under an advisory lock (two workers starting at once create it
// once): an empty database gets the v3.2.0.a schema; a database at v3.0.0.d
// or v3.2.0.a with all of Optuna's tables is used as it is. Returns the
// version. A database holding other tables and no alembic_version (another
// tool's), or an alembic version bfhpo does not know, or Optuna's tables
// partly missing, is a UserError naming the URL and the fix, and nothing is
// written. With `create` false an empty database is a UserError too.
std::string ensure_optuna_schema(PostgresConnection& connection, bool create);

}  // namespace bfhpo::hpo
