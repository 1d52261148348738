#include "hpo/storage/postgres_connection.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/libpq_library.hpp"
#include "hpo/storage/postgres_url.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace bfhpo::hpo {
namespace {

std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  std::replace(message.begin(), message.end(), '\n', ' ');
  return message;
}

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// Why a connection could not be opened, as the fix a user needs; `shown` is
// libpq's message as it may be printed.
UserError connection_error(const std::string& location, const std::string& libpq_message, const std::string& shown) {
  std::string fix;
  if (contains(libpq_message, "password authentication failed") || contains(libpq_message, "no password supplied"))
    fix = "correct the user and password in the URL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)";
  else if (contains(libpq_message, "does not exist") && contains(libpq_message, "database"))
    fix = "create the database first (createdb -h HOST -p PORT -U USER DATABASE) or name an existing one in the URL";
  else if (contains(libpq_message, "invalid") || contains(libpq_message, "missing") || contains(libpq_message, "URI"))
    fix = "write the URL as postgresql://USER:PASSWORD@HOST:PORT/DATABASE?key=value, percent-encoding what is not "
          "a letter or digit in the password and the values (%40 for @, %2F for /, %20 for a space, %3D for =)";
  else
    fix = "start PostgreSQL there, or correct the host and port in the URL; check that the server accepts TCP "
          "connections from this host (listen_addresses, pg_hba.conf)";
  return UserError::at(location, "storage", "cannot connect to PostgreSQL (" + shown + ")", fix);
}

// SQLSTATEs a retry on a fresh connection or a fresh transaction may cure:
// connection exceptions (08), the backend shut down or terminated (57P01-3),
// a serialization failure or deadlock victim (40001, 40P01).
bool retryable_state(const std::string& state) {
  return state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" || state == "57P03" ||
         state == "40001" || state == "40P01";
}

// SQLSTATEs a user fixes on the server side, with the fix.
std::optional<std::string> user_fix(const std::string& state) {
  if (state == "42501") return "grant the URL's user the rights to create and write tables in that database";
  if (state == "25006") return "point the URL at a writable (primary) server";
  if (state.rfind("53", 0) == 0) return "free disk space or memory on the PostgreSQL server, or raise max_connections";
  if (state == "57014") return "the statement was cancelled on the server (statement_timeout?); rerun";
  if (state == "22001")
    return "shorten the study's name, the parameters' names and the attributes' keys to at most 512 characters "
           "(Optuna's schema)";
  if (state == "3F000") return "create the schema the URL's search_path names (CREATE SCHEMA name), or remove the option";
  return std::nullopt;
}

}  // namespace

PostgresResult::PostgresResult(pg_result* result, const Libpq& libpq) : result_(result, libpq.PQclear), libpq_(&libpq) {}
int PostgresResult::rows() const { return libpq_->PQntuples(result_.get()); }
bool PostgresResult::is_null(int row, int column) const { return libpq_->PQgetisnull(result_.get(), row, column) != 0; }
std::string PostgresResult::text(int row, int column) const {
  return std::string(libpq_->PQgetvalue(result_.get(), row, column),
                     static_cast<std::size_t>(libpq_->PQgetlength(result_.get(), row, column)));
}
long long PostgresResult::integer(int row, int column) const { return std::stoll(text(row, column)); }
double PostgresResult::real(int row, int column) const {
  const std::string value = text(row, column);
  if (value == "NaN") return std::nan("");
  if (value == "Infinity") return HUGE_VAL;
  if (value == "-Infinity") return -HUGE_VAL;
  return std::strtod(value.c_str(), nullptr);
}
int PostgresResult::status() const { return result_ ? libpq_->PQresultStatus(result_.get()) : PGRES_FATAL_ERROR; }
std::string PostgresResult::sqlstate() const {
  const char* state = result_ ? libpq_->PQresultErrorField(result_.get(), PG_DIAG_SQLSTATE) : nullptr;
  return state ? state : "";
}
std::string PostgresResult::error_message(const char* fallback) const {
  const char* message = result_ ? libpq_->PQresultErrorMessage(result_.get()) : nullptr;
  return message && *message ? message : fallback;
}
long long PostgresResult::affected() const {
  const char* count = libpq_->PQcmdTuples(result_.get());
  return *count ? std::atoll(count) : 0;
}

PostgresConnection::PostgresConnection(const std::string& url, PostgresOptions options)
    : url_(libpq_url(url)), location_(redacted_postgres_url(url)), options_(options), libpq_(load_libpq(location_)) {
  connect_or_throw();
}

std::string PostgresConnection::printable(const std::string& libpq_message) const {
  return trimmed(without_url_secrets(libpq_message, url_));
}

PostgresConnection::~PostgresConnection() {
  if (connection_) libpq_.PQfinish(connection_);
}

void PostgresConnection::connect_or_throw() {
  if (connection_) libpq_.PQfinish(connection_);
  const std::string timeout = std::to_string(std::max(1, static_cast<int>(std::ceil(options_.connect_timeout_s))));
  // The URL comes last so that what it sets wins over these defaults.
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "bfhpo", url_.c_str(), nullptr};
  connection_ = libpq_.PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (!connection_) throw std::bad_alloc();
  if (libpq_.PQstatus(connection_) != CONNECTION_OK) {
    const std::string message = libpq_.PQerrorMessage(connection_);
    throw connection_error(location_, message, printable(message));
  }
  libpq_.PQsetNoticeProcessor(connection_, [](void*, const char*) {}, nullptr);
  // Floats as text in their shortest form that reads back exactly, whatever the server's default.
  PostgresResult set(libpq_.PQexec(connection_, "SET extra_float_digits = 3"), libpq_);
  if (set.status() != PGRES_COMMAND_OK) {
    const std::string message = set.error_message(libpq_.PQerrorMessage(connection_));
    throw connection_error(location_, message, printable(message));
  }
}

std::chrono::steady_clock::time_point PostgresConnection::retry_deadline() const {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(options_.reconnect_window_s));
}

void PostgresConnection::reconnect(const std::string& reason, std::chrono::steady_clock::time_point deadline,
                                   int attempt) {
  double wait_s = std::min(5.0, 0.1 * std::pow(2.0, std::min(attempt, 10)));
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      throw UserError::at(location_, "storage",
                          "lost the connection to PostgreSQL (" + reason + ") and could not restore it within " +
                              std::to_string(static_cast<int>(options_.reconnect_window_s)) + " s",
                          "check that the server is up and reachable, then rerun: the trial that was running "
                          "stays RUNNING in the database and is re-queued on resume");
    std::this_thread::sleep_until(std::min(deadline, now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                               std::chrono::duration<double>(wait_s))));
    wait_s = std::min(5.0, wait_s * 2);
    try {
      connect_or_throw();
      ++reconnects_;
      return;
    } catch (const UserError&) {
      // Still down; keep trying until the deadline.
    }
  }
}

PostgresResult PostgresConnection::run(const std::string& sql, const std::vector<Param>& params) {
  if (libpq_.PQstatus(connection_) != CONNECTION_OK) throw Retryable{"the connection is closed"};
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  PostgresResult result(libpq_.PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                            values.data(), nullptr, nullptr, 0),
                        libpq_);
  const int status = result.status();
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const std::string message = printable(result.error_message(libpq_.PQerrorMessage(connection_)));
  const std::string state = result.sqlstate();
  if (libpq_.PQstatus(connection_) != CONNECTION_OK || retryable_state(state)) throw Retryable{message};
  if (auto fix = user_fix(state)) throw UserError::at(location_, "storage", "PostgreSQL: " + message, *fix);
  throw PostgresError(location_ + ": PostgreSQL: " + message + " (in: " + sql + ")", state);
}

bool PostgresConnection::commit(std::chrono::steady_clock::time_point deadline, int attempt) {
  const PostgresResult id = run("SELECT txid_current_if_assigned()", {});
  const Param xid = id.is_null(0, 0) ? Param() : Param(id.text(0, 0));
  try {
    run("COMMIT", {});
    in_transaction_ = false;
    return true;
  } catch (const Retryable& lost) {
    in_transaction_ = false;
    reconnect(lost.reason, deadline, attempt);
    if (!xid) return false;  // it wrote nothing: running it again repeats nothing
    for (;;) {
      // Until the old backend has finished the COMMIT (a dropped network may leave it running).
      const std::string status = exec("SELECT coalesce(txid_status($1::bigint), 'aborted')", {xid}).text(0, 0);
      if (status != "in progress") return status == "committed";
      if (std::chrono::steady_clock::now() >= deadline)
        throw UserError::at(location_, "storage",
                            "lost the connection to PostgreSQL during a COMMIT and the server still has it in "
                            "progress after " + std::to_string(static_cast<int>(options_.reconnect_window_s)) + " s",
                            "check the server (pg_stat_activity), then rerun");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

PostgresResult PostgresConnection::exec(const std::string& sql, const std::vector<Param>& params) {
  if (in_transaction_) return run(sql, params);
  const auto deadline = retry_deadline();
  for (int attempt = 0;; ++attempt) {
    try {
      return run(sql, params);
    } catch (const Retryable& lost) {
      reconnect(lost.reason, deadline, attempt);
    }
  }
}

}  // namespace bfhpo::hpo
