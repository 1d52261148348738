#include "hpo/storage/postgres_storage.hpp"

#include "common/user_error.hpp"
#include "hpo/journal_json.hpp"
#include "hpo/storage/optuna_rdb_schema.hpp"
#include "hpo/storage/postgres_connection.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace bfhpo::hpo {
namespace {

using Param = PostgresConnection::Param;

// Optuna's TrialState enum names are to_string's.
TrialState state_from_optuna(const std::string& name) {
  for (TrialState s : {TrialState::Running, TrialState::Complete, TrialState::Pruned, TrialState::Fail,
                       TrialState::Waiting})
    if (name == to_string(s)) return s;
  throw std::runtime_error("PostgreSQL storage: unknown trial state '" + name + "'");
}

const char* optuna_direction(StudyDirection direction) {
  return direction == StudyDirection::Maximize ? "MAXIMIZE" : "MINIMIZE";
}

std::string decimal(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

double from_decimal(const std::string& text) {
  if (text == "NaN") return std::nan("");
  if (text == "Infinity") return HUGE_VAL;
  if (text == "-Infinity") return -HUGE_VAL;
  return std::strtod(text.c_str(), nullptr);
}

// Optuna's value_to_stored_repr / intermediate_value_to_stored_repr: the
// non-finite values as a type with a NULL value (NaN only for intermediates).
std::pair<Param, const char*> stored_value(double value, bool nan_has_type) {
  if (std::isinf(value)) return {std::nullopt, value > 0 ? "INF_POS" : "INF_NEG"};
  if (nan_has_type && std::isnan(value)) return {std::nullopt, "NAN"};
  return {decimal(value), "FINITE"};
}

double value_from_stored(const nlohmann::json& value, const std::string& type) {
  if (type == "INF_POS") return HUGE_VAL;
  if (type == "INF_NEG") return -HUGE_VAL;
  if (type == "NAN") return std::nan("");
  return from_decimal(value.get<std::string>());
}

constexpr const char* kNowUtc = "(now() AT TIME ZONE 'UTC')";

// A study's trials newer than $2 or among the ids $3, each with everything
// a FrozenTrial holds, in one round trip. Numbers and floats travel as text.
constexpr const char* kSelectTrials = R"SQL(
SELECT t.trial_id, t.number, t.state,
       to_char(t.datetime_start, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       to_char(t.datetime_complete, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       (SELECT json_agg(json_build_array(v.value::text, v.value_type) ORDER BY v.objective) FROM trial_values v
         WHERE v.trial_id = t.trial_id),
       (SELECT json_agg(json_build_array(p.param_name, p.param_value::text, p.distribution_json))
          FROM trial_params p WHERE p.trial_id = t.trial_id),
       (SELECT json_agg(json_build_array(i.step, i.intermediate_value::text, i.intermediate_value_type))
          FROM trial_intermediate_values i WHERE i.trial_id = t.trial_id),
       (SELECT json_object_agg(a.key, a.value_json) FROM trial_user_attributes a WHERE a.trial_id = t.trial_id),
       (SELECT json_object_agg(a.key, a.value_json) FROM trial_system_attributes a WHERE a.trial_id = t.trial_id),
       (SELECT extract(epoch FROM h.heartbeat AT TIME ZONE current_setting('TimeZone'))::text
          FROM trial_heartbeats h WHERE h.trial_id = t.trial_id)
  FROM trials t
 WHERE t.study_id = $1 AND (t.trial_id > $2 OR t.trial_id = ANY($3::int[]))
 ORDER BY t.number)SQL";

// {"key": "<JSON text>"} as json_object_agg gives it -> {"key": value}.
nlohmann::json attributes_from(const PostgresResult& rows, int row, int column) {
  nlohmann::json attrs = nlohmann::json::object();
  if (rows.is_null(row, column)) return attrs;
  const nlohmann::json texts = nlohmann::json::parse(rows.text(row, column));
  for (auto text = texts.begin(); text != texts.end(); ++text)
    attrs[text.key()] = parse_python_json(text->get<std::string>());
  return attrs;
}

FrozenTrial trial_from_row(const PostgresResult& rows, int row) {
  FrozenTrial t;
  t.trial_id = static_cast<int>(rows.integer(row, 0));
  t.number = static_cast<int>(rows.integer(row, 1));
  t.state = state_from_optuna(rows.text(row, 2));
  if (!rows.is_null(row, 3)) t.datetime_start = rows.text(row, 3);
  if (!rows.is_null(row, 4)) t.datetime_complete = rows.text(row, 4);
  if (!rows.is_null(row, 5))
    for (const auto& value : nlohmann::json::parse(rows.text(row, 5)))
      t.values.push_back(value_from_stored(value[0], value[1].get<std::string>()));
  if (!rows.is_null(row, 6))
    for (const auto& p : nlohmann::json::parse(rows.text(row, 6))) {
      const std::string name = p[0].get<std::string>();
      t.params[name] = from_decimal(p[1].get<std::string>());
      t.distributions[name] = distribution_from_optuna_json(p[2].get<std::string>());
    }
  if (!rows.is_null(row, 7))
    for (const auto& i : nlohmann::json::parse(rows.text(row, 7)))
      t.intermediate_values[i[0].get<int>()] = value_from_stored(i[1], i[2].get<std::string>());
  t.user_attrs = attributes_from(rows, row, 8);
  t.system_attrs = attributes_from(rows, row, 9);
  if (!rows.is_null(row, 10)) t.system_attrs[kHeartbeatAttr] = from_decimal(rows.text(row, 10));
  return t;
}

class PostgresStorage final : public Storage {
 public:
  PostgresStorage(const std::string& url, StorageAccess access) : connection_(url), access_(access) {
    ensure_optuna_schema(connection_, access == StorageAccess::ReadWrite);
    load_studies();
  }

  std::string location() const override { return connection_.location(); }

  void sync() override {
    load_studies();
    for (auto& [study_id, cache] : caches_) refresh(study_id);
  }

  int get_or_create_study(const std::string& name, const Directions& directions) override {
    writable();
    // The directions as one text, "MINIMIZE,MAXIMIZE", in objective order.
    std::string wanted;
    for (StudyDirection direction : directions) wanted += (wanted.empty() ? "" : ",") + std::string(optuna_direction(direction));
    const int study_id = connection_.transaction([&](bool) {
      const char* find =
          "SELECT s.study_id, (SELECT string_agg(d.direction::text, ',' ORDER BY d.objective) "
          "FROM study_directions d WHERE d.study_id = s.study_id) FROM studies s WHERE s.study_name = $1";
      PostgresResult found = connection_.exec(find, {name});
      if (found.rows() == 0) {
        const PostgresResult created = connection_.exec(
            "INSERT INTO studies (study_name) VALUES ($1) ON CONFLICT (study_name) DO NOTHING RETURNING study_id",
            {name});
        if (created.rows() == 1) {
          for (std::size_t objective = 0; objective < directions.size(); ++objective)
            connection_.exec("INSERT INTO study_directions (direction, study_id, objective) VALUES ($1, $2, $3)",
                             {std::string(optuna_direction(directions[objective])), created.text(0, 0),
                              std::to_string(objective)});
          return static_cast<int>(created.integer(0, 0));
        }
        found = connection_.exec(find, {name});  // another worker created it first
      }
      if (found.is_null(0, 1) || found.text(0, 1) != wanted)
        throw UserError::at(location(), "direction",
                            "study '" + name + "' exists in this database to " +
                                (found.is_null(0, 1) ? std::string("no direction") : found.text(0, 1)) +
                                ", the study file says " + to_string(directions),
                            "use the study's directions, or another study name");
      return static_cast<int>(found.integer(0, 0));
    });
    load_studies();
    return study_id;
  }

  std::optional<int> find_study(const std::string& name) const override {
    for (const auto& s : studies_)
      if (s.name == name) return s.study_id;
    return std::nullopt;
  }

  std::vector<StudyRecord> studies() const override { return studies_; }

  void set_study_system_attr(int study_id, const std::string& key, const nlohmann::json& value) override {
    writable();
    connection_.exec("INSERT INTO study_system_attributes (study_id, key, value_json) VALUES ($1, $2, $3) "
                     "ON CONFLICT (study_id, key) DO UPDATE SET value_json = EXCLUDED.value_json",
                     {std::to_string(study_id), key, dump_python_json(value)});
    load_studies();
  }

  int create_trial(int study_id, const FrozenTrial* template_trial) override {
    writable();
    return connection_.transaction([&](bool retried) {
      if (retried) forget(study_id);
      lock_study(study_id);
      const FrozenTrial blank;
      const FrozenTrial& from = template_trial ? *template_trial : blank;
      // As Optuna: RUNNING while its fields are written, then the template's state.
      const int trial_id = insert_trial(study_id, template_trial);
      write_values(trial_id, from.values);
      write_params(trial_id, from.params, from.distributions);
      for (const auto& [key, value] : from.user_attrs.items()) write_attr("trial_user_attributes", trial_id, key, value);
      write_system_attrs(trial_id, from.system_attrs);
      for (const auto& [step, value] : from.intermediate_values) write_intermediate(trial_id, step, value);
      if (from.state != TrialState::Running)
        connection_.exec("UPDATE trials SET state = $2 WHERE trial_id = $1",
                         {std::to_string(trial_id), std::string(to_string(from.state))});
      refresh(study_id);
      return trial_id;
    });
  }

  std::optional<int> create_trial_if(int study_id, const Admission& admit,
                                     const nlohmann::json& system_attrs) override {
    writable();
    return connection_.transaction([&](bool retried) -> std::optional<int> {
      if (!admit(locked_trials(study_id, retried))) return std::nullopt;
      const int trial_id = insert_trial(study_id, nullptr);
      write_system_attrs(trial_id, system_attrs);
      refresh(study_id);
      return trial_id;
    });
  }

  std::optional<int> claim_waiting_trial(int study_id, const Admission& admit,
                                         const nlohmann::json& system_attrs) override {
    writable();
    return connection_.transaction([&](bool retried) -> std::optional<int> {
      const std::vector<FrozenTrial>& trials = locked_trials(study_id, retried);
      std::vector<int> waiting;
      for (const auto& t : trials)
        if (t.state == TrialState::Waiting) waiting.push_back(t.trial_id);
      if (waiting.empty() || !admit(trials)) return std::nullopt;
      for (int trial_id : waiting) {
        // Optuna claims a WAITING trial under a lock on its row, not the study's: the WHERE decides.
        const PostgresResult claimed = connection_.exec(
            std::string("UPDATE trials SET state = 'RUNNING', datetime_start = ") + kNowUtc +
                " WHERE trial_id = $1 AND state = 'WAITING'",
            {std::to_string(trial_id)});
        if (claimed.affected() == 0) continue;
        write_system_attrs(trial_id, system_attrs);
        refresh(study_id);
        return trial_id;
      }
      return std::nullopt;
    });
  }

  void set_trial_params(int trial_id, const Params& params,
                        const std::map<std::string, Distribution>& distributions) override {
    writable();
    connection_.transaction([&](bool) {
      if (!lock_unfinished(trial_id)) return;
      write_params(trial_id, params, distributions);
    });
    FrozenTrial& t = cached(trial_id);
    if (t.is_finished()) return;
    for (const auto& [name, value] : params) {
      t.params[name] = value;
      t.distributions[name] = distributions.at(name);
    }
  }

  bool set_trial_state_values(int trial_id, TrialState state, const std::vector<double>& values) override {
    writable();
    const bool changed = connection_.transaction([&](bool) {
      const PostgresResult current =
          connection_.exec("SELECT state FROM trials WHERE trial_id = $1 FOR UPDATE", {std::to_string(trial_id)});
      if (current.rows() == 0) throw std::out_of_range("PostgreSQL storage: no trial " + std::to_string(trial_id));
      const TrialState now = state_from_optuna(current.text(0, 0));
      const bool finished = now == TrialState::Complete || now == TrialState::Pruned || now == TrialState::Fail;
      if (finished) return false;
      if (state == TrialState::Running && now != TrialState::Waiting) return false;
      write_values(trial_id, values);
      std::string set = "UPDATE trials SET state = $2";
      if (state == TrialState::Running) set += std::string(", datetime_start = ") + kNowUtc;
      if (state != TrialState::Running && state != TrialState::Waiting)
        set += std::string(", datetime_complete = ") + kNowUtc;
      connection_.exec(set + " WHERE trial_id = $1", {std::to_string(trial_id), std::string(to_string(state))});
      return true;
    });
    if (changed) refresh(study_of(trial_id));
    return changed;
  }

  void set_trial_intermediate_value(int trial_id, int step, double value) override {
    writable();
    const auto [stored, type] = stored_value(value, true);
    connection_.exec(
        "INSERT INTO trial_intermediate_values (trial_id, step, intermediate_value, intermediate_value_type) "
        "SELECT $1, $2, $3, $4 FROM trials WHERE trial_id = $1 AND state IN ('RUNNING', 'WAITING') "
        "ON CONFLICT (trial_id, step) DO UPDATE SET intermediate_value = EXCLUDED.intermediate_value, "
        "intermediate_value_type = EXCLUDED.intermediate_value_type",
        {std::to_string(trial_id), std::to_string(step), stored, std::string(type)});
    FrozenTrial& t = cached(trial_id);
    if (!t.is_finished()) t.intermediate_values[step] = value;
  }

  void set_trial_user_attr(int trial_id, const std::string& key, const nlohmann::json& value) override {
    writable();
    write_attr("trial_user_attributes", trial_id, key, value);
    FrozenTrial& t = cached(trial_id);
    if (!t.is_finished()) t.user_attrs[key] = value;
  }

  void set_trial_system_attr(int trial_id, const std::string& key, const nlohmann::json& value) override {
    writable();
    if (key == kHeartbeatAttr) return record_heartbeat(trial_id);
    write_attr("trial_system_attributes", trial_id, key, value);
    FrozenTrial& t = cached(trial_id);
    if (!t.is_finished()) t.system_attrs[key] = value;
  }

  void record_heartbeat(int trial_id) override {
    writable();
    const PostgresResult beat = connection_.exec(
        "INSERT INTO trial_heartbeats (trial_id, heartbeat) SELECT $1, now() FROM trials "
        "WHERE trial_id = $1 AND state = 'RUNNING' "
        "ON CONFLICT (trial_id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat "
        "RETURNING extract(epoch FROM heartbeat AT TIME ZONE current_setting('TimeZone'))::text",
        {std::to_string(trial_id)});
    if (beat.rows() == 1) cached(trial_id).system_attrs[kHeartbeatAttr] = from_decimal(beat.text(0, 0));
  }

  const FrozenTrial& trial(int trial_id) const override {
    const auto where = where_.find(trial_id);
    if (where == where_.end()) throw std::out_of_range("PostgreSQL storage: no trial " + std::to_string(trial_id));
    return caches_.at(where->second.first).trials.at(static_cast<std::size_t>(where->second.second));
  }

  const std::vector<FrozenTrial>& trials_of(int study_id) const override {
    if (!caches_.count(study_id)) refresh(study_id);  // a study's first view is read on demand
    return caches_.at(study_id).trials;
  }

 private:
  struct StudyTrials {
    std::vector<FrozenTrial> trials;  // index == number
    int max_trial_id = 0;
  };

  void writable() const {
    if (access_ == StorageAccess::ReadOnly) throw std::logic_error("PostgreSQL storage opened read-only: no writes");
  }

  void load_studies() {
    const PostgresResult rows = connection_.exec(
        "SELECT s.study_id, s.study_name, "
        "(SELECT string_agg(d.direction::text, ',' ORDER BY d.objective) FROM study_directions d "
        "WHERE d.study_id = s.study_id), "
        "(SELECT json_object_agg(a.key, a.value_json) FROM study_user_attributes a WHERE a.study_id = s.study_id), "
        "(SELECT json_object_agg(a.key, a.value_json) FROM study_system_attributes a WHERE a.study_id = s.study_id) "
        "FROM studies s ORDER BY s.study_id");
    studies_.clear();
    for (int row = 0; row < rows.rows(); ++row) {
      StudyRecord s;
      s.study_id = static_cast<int>(rows.integer(row, 0));
      s.name = rows.text(row, 1);
      s.directions.clear();
      std::stringstream listed(rows.is_null(row, 2) ? std::string("MINIMIZE") : rows.text(row, 2));
      for (std::string direction; std::getline(listed, direction, ',');)
        s.directions.push_back(direction == "MAXIMIZE" ? StudyDirection::Maximize : StudyDirection::Minimize);
      s.user_attrs = attributes_from(rows, row, 3);
      s.system_attrs = attributes_from(rows, row, 4);
      studies_.push_back(std::move(s));
    }
  }

  // Reads the study's trials created since the last read, and its unfinished
  // ones again (finished trials never change).
  void refresh(int study_id) const {
    StudyTrials& cache = caches_[study_id];
    std::string unfinished = "{";
    for (const auto& t : cache.trials)
      if (!t.is_finished()) unfinished += (unfinished.size() > 1 ? "," : "") + std::to_string(t.trial_id);
    unfinished += "}";
    const PostgresResult rows = connection_.exec(
        kSelectTrials, {std::to_string(study_id), std::to_string(cache.max_trial_id), unfinished});
    for (int row = 0; row < rows.rows(); ++row) {
      FrozenTrial t = trial_from_row(rows, row);
      const auto index = static_cast<std::size_t>(t.number);
      if (index >= cache.trials.size()) cache.trials.resize(index + 1);
      cache.max_trial_id = std::max(cache.max_trial_id, t.trial_id);
      where_[t.trial_id] = {study_id, t.number};
      cache.trials[index] = std::move(t);
    }
  }

  // Drops what is cached of a study: after a transaction was cut, what it
  // read may not have been committed.
  void forget(int study_id) {
    const auto cache = caches_.find(study_id);
    if (cache == caches_.end()) return;
    for (const auto& t : cache->second.trials) where_.erase(t.trial_id);
    caches_.erase(cache);
  }

  // The study's trials under Optuna's lock for creating trials (see lock_study),
  // read afresh; after a cut transaction, from scratch.
  const std::vector<FrozenTrial>& locked_trials(int study_id, bool retried) {
    if (retried) forget(study_id);
    lock_study(study_id);
    refresh(study_id);
    return caches_.at(study_id).trials;
  }

  // Optuna's lock for creating trials in a study: its row, FOR UPDATE.
  void lock_study(int study_id) {
    if (connection_.exec("SELECT study_id FROM studies WHERE study_id = $1 FOR UPDATE", {std::to_string(study_id)})
            .rows() == 0)
      throw UserError::at(location(), "storage", "study " + std::to_string(study_id) + " was deleted meanwhile",
                          "rerun to create it again");
  }

  // False when the trial is finished (its row locked otherwise).
  bool lock_unfinished(int trial_id) {
    const PostgresResult current =
        connection_.exec("SELECT state FROM trials WHERE trial_id = $1 FOR UPDATE", {std::to_string(trial_id)});
    if (current.rows() == 0) throw std::out_of_range("PostgreSQL storage: no trial " + std::to_string(trial_id));
    const std::string state = current.text(0, 0);
    return state == "RUNNING" || state == "WAITING";
  }

  // A new trial row numbered after the study's trials (the study row is locked).
  // A new RUNNING trial row numbered after the study's trials (the study row
  // is locked): starting now, or at the template's times (NULL when empty).
  int insert_trial(int study_id, const FrozenTrial* template_trial) {
    const auto time = [](const std::string& iso) { return iso.empty() ? Param() : Param(iso); };
    const std::string sql =
        "INSERT INTO trials (number, study_id, state, datetime_start, datetime_complete) "
        "VALUES ((SELECT count(*) FROM trials WHERE study_id = $1), $1, 'RUNNING', " +
        std::string(template_trial ? "$2::timestamp, $3::timestamp" : std::string(kNowUtc) + ", NULL") +
        ") RETURNING trial_id";
    std::vector<Param> params{std::to_string(study_id)};
    if (template_trial) {
      params.push_back(time(template_trial->datetime_start));
      params.push_back(time(template_trial->datetime_complete));
    }
    return static_cast<int>(connection_.exec(sql, params).integer(0, 0));
  }

  // One row per objective, as Optuna's set_trial_state_values.
  void write_values(int trial_id, const std::vector<double>& values) {
    for (std::size_t objective = 0; objective < values.size(); ++objective) {
      const auto [stored, type] = stored_value(values[objective], false);
      connection_.exec(
          "INSERT INTO trial_values (trial_id, objective, value, value_type) VALUES ($1, $2, $3, $4) "
          "ON CONFLICT (trial_id, objective) DO UPDATE SET value = EXCLUDED.value, value_type = EXCLUDED.value_type",
          {std::to_string(trial_id), std::to_string(objective), stored, std::string(type)});
    }
  }

  // Every param in one statement: one round trip to the server however many params.
  void write_params(int trial_id, const Params& params, const std::map<std::string, Distribution>& distributions) {
    if (params.empty()) return;
    std::string sql = "INSERT INTO trial_params (trial_id, param_name, param_value, distribution_json) VALUES ";
    std::vector<PostgresConnection::Param> values{std::to_string(trial_id)};
    for (const auto& [name, value] : params) {
      const std::string n = std::to_string(values.size() + 1);
      sql += (values.size() > 1 ? ", ($1, $" : "($1, $") + n + ", $" + std::to_string(values.size() + 2) + ", $" +
             std::to_string(values.size() + 3) + ")";
      values.insert(values.end(), {name, decimal(value), distribution_to_optuna_json(distributions.at(name))});
    }
    connection_.exec(sql + " ON CONFLICT (trial_id, param_name) DO UPDATE SET param_value = EXCLUDED.param_value, "
                           "distribution_json = EXCLUDED.distribution_json",
                     values);
  }

  void write_intermediate(int trial_id, int step, double value) {
    const auto [stored, type] = stored_value(value, true);
    connection_.exec(
        "INSERT INTO trial_intermediate_values (trial_id, step, intermediate_value, intermediate_value_type) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (trial_id, step) DO UPDATE SET "
        "intermediate_value = EXCLUDED.intermediate_value, intermediate_value_type = EXCLUDED.intermediate_value_type",
        {std::to_string(trial_id), std::to_string(step), stored, std::string(type)});
  }

  // An attribute of an unfinished trial, as Optuna writes it (json.dumps).
  void write_attr(const std::string& table, int trial_id, const std::string& key, const nlohmann::json& value) {
    connection_.exec("INSERT INTO " + table + " (trial_id, key, value_json) SELECT $1, $2, $3 FROM trials "
                     "WHERE trial_id = $1 AND state IN ('RUNNING', 'WAITING') "
                     "ON CONFLICT (trial_id, key) DO UPDATE SET value_json = EXCLUDED.value_json",
                     {std::to_string(trial_id), key, dump_python_json(value)});
  }

  void write_system_attrs(int trial_id, const nlohmann::json& attrs) {
    for (const auto& [key, value] : attrs.items()) {
      if (key == kHeartbeatAttr)
        connection_.exec("INSERT INTO trial_heartbeats (trial_id, heartbeat) VALUES ($1, now()) "
                         "ON CONFLICT (trial_id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat",
                         {std::to_string(trial_id)});
      else
        write_attr("trial_system_attributes", trial_id, key, value);
    }
  }

  int study_of(int trial_id) const {
    const auto where = where_.find(trial_id);
    if (where == where_.end()) throw std::out_of_range("PostgreSQL storage: no trial " + std::to_string(trial_id));
    return where->second.first;
  }

  FrozenTrial& cached(int trial_id) { return const_cast<FrozenTrial&>(trial(trial_id)); }

  mutable PostgresConnection connection_;
  StorageAccess access_;
  std::vector<StudyRecord> studies_;
  // Per study, read on first view; trial id -> (study id, number).
  mutable std::map<int, StudyTrials> caches_;
  mutable std::unordered_map<int, std::pair<int, int>> where_;
};

}  // namespace

std::unique_ptr<Storage> open_postgres_storage(const std::string& url, StorageAccess access) {
  return std::make_unique<PostgresStorage>(url, access);
}

}  // namespace bfhpo::hpo
