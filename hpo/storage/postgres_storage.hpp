// PostgreSQL storage in Optuna's RDB schema (optuna_rdb_schema.hpp), opened
// from a `postgresql://user:pass@host:port/db` URL: Optuna's RDBStorage,
// optuna-dashboard and bfhpo workers on any number of hosts share a study.
//
// As Optuna's RDBStorage writes it:
// - a trial is created under a row lock on its study (SELECT ... FOR
//   UPDATE, as Optuna's create_new_trial takes), its number the count of the
//   study's trials before it; create_trial_if checks `admit` in that same
//   transaction, so workers on many hosts never overshoot n_trials;
// - params as their internal value with Optuna's distribution JSON, values
//   and intermediate values with their FINITE / INF_POS / INF_NEG / NAN type,
//   attributes as JSON text (Python's NaN / Infinity tokens read and written);
// - heartbeats in trial_heartbeats at the server's now(), as Optuna's
//   record_heartbeat, seen as system_attrs[kHeartbeatAttr] (unix seconds);
//   a kHeartbeatAttr written as a system attribute goes there too;
// - datetimes as naive UTC (Optuna >= 3.2's convention).
// Finished trials are cached (they never change); a sync reads the study's
// new trials and its unfinished ones again, in one statement.
//
// A server restarted or a connection dropped in the middle of a study: each
// call reconnects with backoff (postgres_connection.hpp). Writes made of
// several statements (creating and claiming trials, finishing one) are one
// transaction each, committed exactly once; each write of one statement is
// an upsert or guarded by the trial's state, so running it again after a
// lost connection changes nothing more. No trial is created twice or lost.
#pragma once

#include "hpo/storage/storage.hpp"

#include <memory>
#include <string>

namespace bfhpo::hpo {

// Connects and checks (ReadWrite: creates in an empty database) Optuna's
// schema. UserError naming the URL, password hidden, and the fix when the
// server cannot be reached, refuses the login, or the database holds another
// tool's tables or a schema version bfhpo does not know; nothing is written.
std::unique_ptr<Storage> open_postgres_storage(const std::string& url, StorageAccess access);

}  // namespace bfhpo::hpo
