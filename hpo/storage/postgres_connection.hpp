// One connection to a PostgreSQL server through libpq (loaded when the
// first connection opens, hpo/storage/libpq_library.hpp), for the PostgreSQL
// storage: parameterized statements, transactions, and a lost connection
// retried with backoff for a bounded time.
//
// - Opening: an unreachable server, a refused login, a missing database or a
//   URL libpq cannot read is a UserError naming the URL (password hidden) and
//   the fix. Nothing is written.
// - Statements take text parameters ($1, $2, ...; nullopt is NULL) and give
//   text fields, so doubles travel as their shortest round-trip decimal.
// - A statement or transaction that fails because the connection was lost
//   (the server restarted, the network dropped, the backend was terminated)
//   or because the server chose it as a deadlock / serialization victim is
//   run again on a fresh connection, backing off from 0.1 s to 5 s, for up to
//   PostgresOptions::reconnect_window_s; after that, a UserError. A statement
//   run on its own is simply run again, so callers make each one idempotent
//   (an upsert, a read). A transaction commits exactly once: cut before its
//   COMMIT, it was rolled back and its body runs again from the start, told
//   it is a retry; cut during its COMMIT, whether it committed is asked of
//   the server after reconnecting (txid_status of the transaction's id, as
//   PostgreSQL's documentation prescribes), and a committed one is not run
//   again.
// - Server conditions a user fixes (permission denied, disk full, read-only
//   server, too many connections) are UserErrors; any other SQL error is a
//   PostgresError (a bug: it crashes loudly).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;
struct pg_result;

namespace bfhpo::hpo {

struct Libpq;  // hpo/storage/libpq_library.hpp

// An SQL error that is not the user's to fix; `sqlstate` is PostgreSQL's code.
class PostgresError : public std::runtime_error {
 public:
  PostgresError(const std::string& message, std::string sqlstate)
      : std::runtime_error(message), sqlstate(std::move(sqlstate)) {}
  std::string sqlstate;
};

// The rows of one statement, fields as text.
class PostgresResult {
 public:
  PostgresResult(pg_result* result, const Libpq& libpq);
  int rows() const;
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  long long integer(int row, int column) const;
  double real(int row, int column) const;  // NaN, Infinity and -Infinity too
  // Rows an INSERT / UPDATE / DELETE touched.
  long long affected() const;
  // libpq's ExecStatusType, its SQLSTATE ("" when none) and its message
  // (`fallback` when the result is missing: the connection is gone).
  int status() const;
  std::string sqlstate() const;
  std::string error_message(const char* fallback) const;

 private:
  std::shared_ptr<pg_result> result_;
  const Libpq* libpq_;
};

struct PostgresOptions {
  double reconnect_window_s = 60;  // how long a lost connection is retried
  double connect_timeout_s = 10;   // one connection attempt
};

class PostgresConnection {
 public:
  using Param = std::optional<std::string>;

  explicit PostgresConnection(const std::string& url, PostgresOptions options = {});
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  // The URL with its password hidden.
  const std::string& location() const { return location_; }

  // One statement in its own implicit transaction (or in the open one).
  PostgresResult exec(const std::string& sql, const std::vector<Param>& params = {});

  // Runs body(retried) between BEGIN and COMMIT and returns what it returns.
  // On an exception from body, ROLLBACK and rethrow. `retried` is true when
  // an earlier run was rolled back: cut by a lost connection or chosen as a
  // deadlock victim.
  template <class Body>
  auto transaction(Body&& body) -> decltype(body(false));

  // Times this object had to reconnect (for tests and benches).
  int reconnects() const { return reconnects_; }

 private:
  // Thrown by run() when a retry on a fresh connection may succeed.
  struct Retryable {
    std::string reason;
  };
  PostgresResult run(const std::string& sql, const std::vector<Param>& params);
  void connect_or_throw();
  // Commits the open transaction; false when it did not commit and its body
  // must run again (see the contract above).
  bool commit(std::chrono::steady_clock::time_point deadline, int attempt);
  // A message of libpq's on one line, without the URL's secrets (libpq may echo the URL).
  std::string printable(const std::string& libpq_message) const;
  // Waits and reconnects until `deadline`; UserError after it.
  void reconnect(const std::string& reason, std::chrono::steady_clock::time_point deadline, int attempt);
  std::chrono::steady_clock::time_point retry_deadline() const;

  std::string url_;
  std::string location_;
  PostgresOptions options_;
  const Libpq& libpq_;  // loaded by the first connection of the process
  pg_conn* connection_ = nullptr;
  bool in_transaction_ = false;
  int reconnects_ = 0;
};

template <class Body>
auto PostgresConnection::transaction(Body&& body) -> decltype(body(false)) {
  if (in_transaction_) throw std::logic_error("PostgresConnection: nested transaction");
  const auto deadline = retry_deadline();
  for (int attempt = 0;; ++attempt) {
    try {
      run("BEGIN", {});
      in_transaction_ = true;
      if constexpr (std::is_void_v<decltype(body(false))>) {
        body(attempt > 0);
        if (commit(deadline, attempt)) return;
      } else {
        auto result = body(attempt > 0);
        if (commit(deadline, attempt)) return result;
      }
    } catch (const Retryable& lost) {
      in_transaction_ = false;
      reconnect(lost.reason, deadline, attempt);
    } catch (...) {
      if (in_transaction_) {
        in_transaction_ = false;
        try {
          run("ROLLBACK", {});
        } catch (const Retryable&) {
          // The connection went with the transaction; the next statement reconnects.
        }
      }
      throw;
    }
  }
}

}  // namespace bfhpo::hpo
