#include "hpo/storage/journal_storage.hpp"

#include "common/user_error.hpp"
#include "hpo/flat_json.hpp"
#include "hpo/journal_json.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include <unistd.h>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

enum OpCode {
  kCreateStudy = 0,
  kDeleteStudy = 1,
  kSetStudyUserAttr = 2,
  kSetStudySystemAttr = 3,
  kCreateTrial = 4,
  kSetTrialParam = 5,
  kSetTrialStateValues = 6,
  kSetTrialIntermediateValue = 7,
  kSetTrialUserAttr = 8,
  kSetTrialSystemAttr = 9,
  kDiscardTrials = 10,
};

std::string make_worker_id() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<std::uint64_t>(device()) << 32) ^ device() ^
                      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 10
  char text[64];
  std::snprintf(text, sizeof text, "%08llx-%04llx-%04llx-%04llx-%012llx-%d",
                static_cast<unsigned long long>(hi >> 32), static_cast<unsigned long long>((hi >> 16) & 0xFFFF),
                static_cast<unsigned long long>(hi & 0xFFFF), static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL), static_cast<int>(::getpid()));
  return text;
}

// Python's datetime.now().isoformat(): local time with microseconds.
std::string isoformat_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t seconds = system_clock::to_time_t(now);
  auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[48];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06lld", static_cast<long long>(micros));
  return std::string(text) + fraction;
}

}  // namespace

struct JournalStorage::State {
  std::uint64_t offset = 0;        // bytes of the records applied
  bool ends_with_newline = true;   // whether those bytes end in '\n' (a last record may lack it)
  std::uint64_t lines_read = 0;    // records applied
  std::string own_worker;          // this object's worker_id
  std::optional<int> created_by_own;  // the last trial this object's worker created, by log order
  bool warned_discard = false;
  std::vector<StudyRecord> studies;  // index = study_id; deleted studies keep their slot
  std::vector<bool> study_deleted;
  std::vector<std::vector<FrozenTrial>> study_trials;  // index = study_id; each in number order
  struct TrialAt {
    int study_id;
    int number;
  };
  std::vector<TrialAt> trial_at;  // index = trial_id
  FlatJsonObject scanned;  // the fast path's line, reused
  std::unordered_map<std::string, Distribution> distribution_cache;
  // The same, keyed by the JSON string as written in the line (escapes not decoded).
  std::map<std::string, const Distribution*, std::less<>> escaped_distribution_cache;

  const Distribution& distribution(const std::string& text) {
    auto it = distribution_cache.find(text);
    if (it == distribution_cache.end()) it = distribution_cache.emplace(text, distribution_from_optuna_json(text)).first;
    return it->second;
  }
  const Distribution& distribution(const FlatJsonObject::Field& text) {
    auto it = escaped_distribution_cache.find(text.raw_string);
    if (it == escaped_distribution_cache.end())
      it = escaped_distribution_cache.emplace(text.raw_string, &distribution(FlatJsonObject::decoded(text))).first;
    return *it->second;
  }

  bool study_exists(int id) const {
    return id >= 0 && id < static_cast<int>(studies.size()) && !study_deleted[id];
  }
  int n_trials() const { return static_cast<int>(trial_at.size()); }
  bool trial_exists(int id) const { return id >= 0 && id < n_trials(); }
  FrozenTrial& trial(int id) { return study_trials[trial_at[id].study_id][trial_at[id].number]; }
  bool trial_updatable(int id) { return trial_exists(id) && !trial(id).is_finished(); }

  // --- the changes of the log lines, their fields already read ---
  void add_trial(int study_id, FrozenTrial t, bool by_own_worker) {
    t.trial_id = n_trials();
    if (by_own_worker) created_by_own = t.trial_id;
    t.number = static_cast<int>(study_trials[study_id].size());
    trial_at.push_back({study_id, t.number});
    study_trials[study_id].push_back(std::move(t));
  }
  void set_param(int id, const std::string& name, double internal, const Distribution& d) {
    FrozenTrial& t = trial(id);
    t.params[name] = internal;
    t.distributions[name] = d;
  }
  // Fields read only where they apply: datetime_start for RUNNING, datetime_complete for finished states.
  void set_state_values(int id, TrialState state, std::optional<std::string> datetime_start,
                        std::optional<std::string> datetime_complete, std::optional<std::vector<double>> values) {
    FrozenTrial& t = trial(id);
    if (datetime_start) t.datetime_start = std::move(*datetime_start);
    t.state = state;
    if (datetime_complete) t.datetime_complete = std::move(*datetime_complete);
    if (values) t.values = std::move(*values);
  }
  static bool finished(TrialState state) {
    return state == TrialState::Complete || state == TrialState::Pruned || state == TrialState::Fail;
  }

  void apply(const json& log) {
    switch (log.at("op_code").get<int>()) {
      case kCreateStudy: {
        const std::string name = log.at("study_name").get<std::string>();
        for (std::size_t i = 0; i < studies.size(); ++i)
          if (!study_deleted[i] && studies[i].name == name) return;
        StudyRecord study;
        study.study_id = static_cast<int>(studies.size());
        study.name = name;
        study.directions.clear();
        for (const json& direction : log.at("directions"))
          study.directions.push_back(static_cast<StudyDirection>(direction.get<int>()));
        studies.push_back(std::move(study));
        study_deleted.push_back(false);
        study_trials.emplace_back();
        return;
      }
      case kDeleteStudy: {
        int id = log.at("study_id").get<int>();
        if (study_exists(id)) study_deleted[id] = true;
        return;
      }
      case kSetStudyUserAttr:
      case kSetStudySystemAttr: {
        int id = log.at("study_id").get<int>();
        if (!study_exists(id)) return;
        bool user = log["op_code"] == kSetStudyUserAttr;
        (studies[id].*(user ? &StudyRecord::user_attrs : &StudyRecord::system_attrs))
            .update(log.at(user ? "user_attr" : "system_attr"));
        return;
      }
      case kCreateTrial: {
        int study_id = log.at("study_id").get<int>();
        if (!study_exists(study_id)) return;
        FrozenTrial t;
        t.state = trial_state_from_code(log.value("state", 0LL));
        if (log.contains("distributions"))
          for (const auto& item : log["distributions"].items())
            t.distributions[item.key()] = distribution(item.value().get<std::string>());
        if (log.contains("params"))
          for (const auto& item : log["params"].items()) t.params[item.key()] = item.value().get<double>();
        if (log.contains("user_attrs")) t.user_attrs = log["user_attrs"];
        if (log.contains("system_attrs")) t.system_attrs = log["system_attrs"];
        if (log.contains("value") && !log["value"].is_null()) t.values = {log["value"].get<double>()};
        if (log.contains("values") && log["values"].is_array() && !log["values"].empty())
          t.values = log["values"].get<std::vector<double>>();
        if (log.contains("intermediate_values"))
          for (const auto& item : log["intermediate_values"].items())
            t.intermediate_values[std::stoi(item.key())] = item.value().get<double>();
        if (log.contains("datetime_start") && log["datetime_start"].is_string())
          t.datetime_start = log["datetime_start"].get<std::string>();
        if (log.contains("datetime_complete") && log["datetime_complete"].is_string())
          t.datetime_complete = log["datetime_complete"].get<std::string>();
        add_trial(study_id, std::move(t), log.contains("worker_id") && log["worker_id"] == own_worker);
        return;
      }
      case kSetTrialParam: {
        int id = log.at("trial_id").get<int>();
        if (!trial_updatable(id)) return;
        const std::string name = log.at("param_name").get<std::string>();
        const double internal = log.at("param_value_internal").get<double>();
        set_param(id, name, internal, distribution(log.at("distribution").get<std::string>()));
        return;
      }
      case kSetTrialStateValues: {
        int id = log.at("trial_id").get<int>();
        if (!trial_updatable(id)) return;
        auto state = trial_state_from_code(log.at("state").get<long long>());
        if (state == TrialState::Running && trial(id).state == TrialState::Running) return;
        std::optional<std::string> start, complete;
        std::optional<std::vector<double>> values;
        if (state == TrialState::Running && log.contains("datetime_start"))
          start = log["datetime_start"].get<std::string>();
        if (finished(state) && log.contains("datetime_complete"))
          complete = log["datetime_complete"].get<std::string>();
        if (log.contains("values") && log["values"].is_array() && !log["values"].empty())
          values = log["values"].get<std::vector<double>>();
        set_state_values(id, state, std::move(start), std::move(complete), std::move(values));
        return;
      }
      case kSetTrialIntermediateValue: {
        int id = log.at("trial_id").get<int>();
        if (!trial_updatable(id)) return;
        const int step = log.at("step").get<int>();
        trial(id).intermediate_values[step] = log.at("intermediate_value").get<double>();
        return;
      }
      case kSetTrialUserAttr:
      case kSetTrialSystemAttr: {
        int id = log.at("trial_id").get<int>();
        if (!trial_updatable(id)) return;
        bool user = log["op_code"] == kSetTrialUserAttr;
        (trial(id).*(user ? &FrozenTrial::user_attrs : &FrozenTrial::system_attrs))
            .update(log.at(user ? "user_attr" : "system_attr"));
        return;
      }
      case kDiscardTrials:
        // Optuna >= 5 skips it too (only Rustuna applies it).
        if (!warned_discard)
          std::cerr << "bfhpo: warning: the journal holds op_code 10 (DISCARD_TRIALS, written by Rustuna); "
                       "skipped, as Optuna skips it\n";
        warned_discard = true;
        return;
      default:
        throw std::invalid_argument("unknown op_code " + log["op_code"].dump());
    }
  }

  // The fast path for the common lines: applies the line and returns true, or
  // returns false having changed nothing when apply() must read it. Every
  // field the op may read is checked first, so a line it takes is one that
  // apply() reads without error and to the same effect.
  bool apply_scanned(const FlatJsonObject& log) {
    using Kind = FlatJsonObject::Kind;
    const auto integer = [&](const char* key, int& out) {
      const auto* f = log.find(key);
      if (!f || f->kind != Kind::Integer || f->integer < std::numeric_limits<int>::min() ||
          f->integer > std::numeric_limits<int>::max())
        return false;
      out = static_cast<int>(f->integer);
      return true;
    };
    const auto number = [&](const char* key, double& out) {
      const auto* f = log.find(key);
      if (!f || (f->kind != Kind::Integer && f->kind != Kind::Float)) return false;
      out = f->number;
      return true;
    };
    // A string or absent (nullopt); false for any other kind (null where `null_ok` is false).
    const auto optional_string = [&](const char* key, std::optional<std::string>& out, bool null_ok) {
      const auto* f = log.find(key);
      if (!f || (null_ok && f->kind == Kind::Null)) return true;
      if (f->kind != Kind::String) return false;
      out = FlatJsonObject::decoded(*f);
      return true;
    };
    int op = 0, id = 0;
    if (!integer("op_code", op)) return false;
    switch (op) {
      case kCreateTrial: {
        for (const char* key : {"distributions", "params", "user_attrs", "system_attrs", "value", "values",
                                "intermediate_values"})
          if (log.find(key)) return false;
        int state = 0;
        std::optional<std::string> start, complete;
        if (!integer("study_id", id) || (log.find("state") && !integer("state", state)) ||
            !optional_string("datetime_start", start, true) || !optional_string("datetime_complete", complete, true))
          return false;
        if (!study_exists(id)) return true;
        FrozenTrial t;
        t.state = trial_state_from_code(state);
        if (start) t.datetime_start = std::move(*start);
        if (complete) t.datetime_complete = std::move(*complete);
        const auto* worker = log.find("worker_id");
        add_trial(id, std::move(t), worker && worker->kind == Kind::String && worker->raw_string == own_worker);
        return true;
      }
      case kSetTrialParam: {
        const auto* name = log.find("param_name");
        const auto* text = log.find("distribution");
        double internal = 0;
        if (!integer("trial_id", id) || !name || name->kind != Kind::String || !text || text->kind != Kind::String ||
            !number("param_value_internal", internal))
          return false;
        if (trial_updatable(id)) set_param(id, FlatJsonObject::decoded(*name), internal, distribution(*text));
        return true;
      }
      case kSetTrialStateValues: {
        int state = 0;
        std::optional<std::string> start, complete;
        std::optional<std::vector<double>> values_read;
        if (!integer("trial_id", id) || !integer("state", state) || !optional_string("datetime_start", start, false) ||
            !optional_string("datetime_complete", complete, false))
          return false;
        if (const auto* values = log.find("values"); values && values->kind != Kind::Null) {
          // Several values (a multi-objective study) take the full reader.
          if (values->kind != Kind::NumberArray || values->array_size > 1) return false;
          if (values->array_size == 1) values_read = std::vector<double>{values->number};
        }
        if (!trial_updatable(id)) return true;
        const auto s = trial_state_from_code(state);
        if (s == TrialState::Running && trial(id).state == TrialState::Running) return true;
        if (s != TrialState::Running) start.reset();
        if (!finished(s)) complete.reset();
        set_state_values(id, s, std::move(start), std::move(complete), std::move(values_read));
        return true;
      }
      case kSetTrialIntermediateValue: {
        int step = 0;
        double value = 0;
        if (!integer("trial_id", id) || !integer("step", step) || !number("intermediate_value", value)) return false;
        if (trial_updatable(id)) trial(id).intermediate_values[step] = value;
        return true;
      }
      case kSetTrialUserAttr:
      case kSetTrialSystemAttr: {
        const bool user = op == kSetTrialUserAttr;
        const auto* attr = log.find(user ? "user_attr" : "system_attr");
        if (!integer("trial_id", id) || !attr || attr->kind != Kind::Structured || !log.structured(*attr).is_object())
          return false;
        if (trial_updatable(id))
          (trial(id).*(user ? &FrozenTrial::user_attrs : &FrozenTrial::system_attrs)).update(log.structured(*attr));
        return true;
      }
      default:
        return false;
    }
  }

  void apply_line(const std::string_view line, JournalStorage::Replay replay) {
    if (replay == JournalStorage::Replay::Fast) {
      if (scanned.scan(line) && apply_scanned(scanned)) return;
    }
    apply(parse_python_json(std::string(line)));
  }
};

JournalStorage::JournalStorage(std::filesystem::path path, StorageAccess access, Replay replay)
    : file_(std::move(path), access), worker_id_(make_worker_id()), replay_(replay), state_(std::make_unique<State>()) {
  state_->own_worker = worker_id_;
  sync();
}

JournalStorage::~JournalStorage() = default;

void JournalStorage::sync() {
  State& s = *state_;
  const auto apply = [&](std::string_view line) {
    const std::uint64_t line_number = s.lines_read + 1;
    try {
      s.apply_line(line, replay_);
    } catch (const std::exception& e) {
      throw UserError::at(path().string(), "line " + std::to_string(line_number),
                          std::string("corrupt journal line (") + e.what() + ")",
                          "restore the journal from a backup, or delete that line if you know what it held");
    }
    s.lines_read = line_number;
  };
  const JournalFile::Read read = file_.read_from(s.offset, [&](std::string_view line) {
    // The '\n' a writer added after a last record that lacked it.
    if (!s.ends_with_newline && line.empty()) {
      s.ends_with_newline = true;
      s.offset += 1;
      return;
    }
    apply(line);
    s.offset += line.size() + 1;
    s.ends_with_newline = true;
  });
  // A last record without '\n' is complete when it is a whole JSON object;
  // anything else there is a write in progress or torn: left for later.
  if (read.tail.empty()) return;
  bool whole = false;
  try {
    whole = parse_python_json(read.tail).is_object();
  } catch (const std::exception&) {
  }
  if (!whole) return;
  apply(read.tail);
  s.offset += read.tail.size();
  s.ends_with_newline = false;
}

template <class Records>
bool JournalStorage::append_locked(Records records) {
  JournalFile::WriteLock lock(file_);
  sync();
  const std::vector<json> logs = records();
  if (logs.empty()) return false;
  std::string text;
  for (const json& log : logs) text += dump_python_json(log) + "\n";
  file_.append(text, state_->offset, state_->ends_with_newline);
  sync();
  return true;
}

json JournalStorage::base_log(int op) const { return json{{"op_code", op}, {"worker_id", worker_id_}}; }

int JournalStorage::get_or_create_study(const std::string& name, const Directions& directions) {
  json log = base_log(kCreateStudy);
  log["study_name"] = name;
  log["directions"] = json::array();
  for (StudyDirection direction : directions) log["directions"].push_back(static_cast<int>(direction));
  append_locked([&] { return find_study(name) ? std::vector<json>{} : std::vector<json>{log}; });
  const int id = *find_study(name);
  const Directions& recorded = state_->studies[id].directions;
  if (recorded != directions)
    throw UserError::at(path().string(), "direction",
                        "study '" + name + "' was created to " + to_string(recorded) + ", the study file says " +
                            to_string(directions),
                        "use the journal's directions or a new storage file");
  return id;
}

std::optional<int> JournalStorage::find_study(const std::string& name) const {
  for (const auto& s : state_->studies)
    if (!state_->study_deleted[s.study_id] && s.name == name) return s.study_id;
  return std::nullopt;
}

std::vector<StudyRecord> JournalStorage::studies() const {
  std::vector<StudyRecord> out;
  for (const auto& s : state_->studies)
    if (!state_->study_deleted[s.study_id]) out.push_back(s);
  return out;
}

void JournalStorage::set_study_user_attr(int study_id, const std::string& key, const json& value) {
  json log = base_log(kSetStudyUserAttr);
  log["study_id"] = study_id;
  log["user_attr"] = {{key, value}};
  append_locked([&] { return std::vector<json>{log}; });
}

void JournalStorage::set_study_system_attr(int study_id, const std::string& key, const json& value) {
  json log = base_log(kSetStudySystemAttr);
  log["study_id"] = study_id;
  log["system_attr"] = {{key, value}};
  append_locked([&] { return std::vector<json>{log}; });
}

namespace {

json create_trial_log(json log, const FrozenTrial& templ) {
  log["state"] = static_cast<int>(templ.state);
  if (templ.state == TrialState::Waiting) log["datetime_start"] = nullptr;
  // As Optuna's create_new_trial: "value" for one objective, "values" for several.
  if (templ.values.size() == 1) log["value"] = templ.values.front();
  if (templ.values.size() > 1) log["values"] = templ.values;
  json params = json::object(), distributions = json::object(), intermediate = json::object();
  for (const auto& [name, v] : templ.params) params[name] = v;
  for (const auto& [name, d] : templ.distributions) distributions[name] = distribution_to_optuna_json(d);
  for (const auto& [step, v] : templ.intermediate_values) intermediate[std::to_string(step)] = v;
  log["params"] = params;
  log["distributions"] = distributions;
  log["user_attrs"] = templ.user_attrs;
  log["system_attrs"] = templ.system_attrs;
  log["intermediate_values"] = intermediate;
  if (templ.is_finished()) log["datetime_complete"] = isoformat_now();
  return log;
}

}  // namespace

int JournalStorage::create_trial(int study_id, const FrozenTrial* templ) {
  json log = base_log(kCreateTrial);
  log["study_id"] = study_id;
  log["datetime_start"] = isoformat_now();
  if (templ) log = create_trial_log(std::move(log), *templ);
  state_->created_by_own.reset();
  append_locked([&] {
    if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
    return std::vector<json>{log};
  });
  return *state_->created_by_own;
}

std::optional<int> JournalStorage::create_trial_if(int study_id, const Admission& admit, const json& system_attrs) {
  json log = base_log(kCreateTrial);
  log["study_id"] = study_id;
  log["datetime_start"] = isoformat_now();
  if (!system_attrs.empty()) log["system_attrs"] = system_attrs;
  state_->created_by_own.reset();
  const bool created = append_locked([&] {
    if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
    return admit(trials_of(study_id)) ? std::vector<json>{log} : std::vector<json>{};
  });
  if (!created) return std::nullopt;
  return state_->created_by_own;
}

std::optional<int> JournalStorage::claim_waiting_trial(int study_id, const Admission& admit, const json& system_attrs) {
  std::optional<int> claimed;
  append_locked([&] {
    claimed.reset();
    const std::vector<FrozenTrial>& trials = trials_of(study_id);
    const auto waiting = std::find_if(trials.begin(), trials.end(),
                                      [](const FrozenTrial& t) { return t.state == TrialState::Waiting; });
    if (waiting == trials.end() || !admit(trials)) return std::vector<json>{};
    claimed = waiting->trial_id;
    json running = base_log(kSetTrialStateValues);
    running["trial_id"] = *claimed;
    running["state"] = static_cast<int>(TrialState::Running);
    running["values"] = nullptr;
    running["datetime_start"] = isoformat_now();
    std::vector<json> logs{running};
    for (const auto& [key, value] : system_attrs.items()) {  // one key a record: Optuna asserts it
      json attr = base_log(kSetTrialSystemAttr);
      attr["trial_id"] = *claimed;
      attr["system_attr"] = {{key, value}};
      logs.push_back(attr);
    }
    return logs;
  });
  return claimed;
}

void JournalStorage::set_trial_params(int trial_id, const Params& params,
                                      const std::map<std::string, Distribution>& distributions) {
  std::vector<json> logs;
  for (const auto& [name, internal] : params) {
    json log = base_log(kSetTrialParam);
    log["trial_id"] = trial_id;
    log["param_name"] = name;
    log["param_value_internal"] = internal;
    log["distribution"] = distribution_to_optuna_json(distributions.at(name));
    logs.push_back(std::move(log));
  }
  if (logs.empty()) return;
  append_locked([&] { return state_->trial_updatable(trial_id) ? logs : std::vector<json>{}; });
}

bool JournalStorage::set_trial_state_values(int trial_id, TrialState state, const std::vector<double>& values) {
  json log = base_log(kSetTrialStateValues);
  log["trial_id"] = trial_id;
  log["state"] = static_cast<int>(state);
  log["values"] = values.empty() ? json(nullptr) : json(values);
  if (state == TrialState::Running) log["datetime_start"] = isoformat_now();
  if (state == TrialState::Complete || state == TrialState::Pruned || state == TrialState::Fail)
    log["datetime_complete"] = isoformat_now();
  return append_locked([&] {
    const bool valid = state_->trial_updatable(trial_id) &&
                       (state != TrialState::Running || state_->trial(trial_id).state == TrialState::Waiting);
    return valid ? std::vector<json>{log} : std::vector<json>{};
  });
}

void JournalStorage::set_trial_intermediate_value(int trial_id, int step, double value) {
  json log = base_log(kSetTrialIntermediateValue);
  log["trial_id"] = trial_id;
  log["step"] = step;
  log["intermediate_value"] = value;
  append_locked([&] { return state_->trial_updatable(trial_id) ? std::vector<json>{log} : std::vector<json>{}; });
}

void JournalStorage::set_trial_user_attr(int trial_id, const std::string& key, const json& value) {
  json log = base_log(kSetTrialUserAttr);
  log["trial_id"] = trial_id;
  log["user_attr"] = {{key, value}};
  append_locked([&] { return state_->trial_updatable(trial_id) ? std::vector<json>{log} : std::vector<json>{}; });
}

void JournalStorage::set_trial_system_attr(int trial_id, const std::string& key, const json& value) {
  json log = base_log(kSetTrialSystemAttr);
  log["trial_id"] = trial_id;
  log["system_attr"] = {{key, value}};
  append_locked([&] { return state_->trial_updatable(trial_id) ? std::vector<json>{log} : std::vector<json>{}; });
}

void JournalStorage::record_heartbeat(int trial_id) { set_trial_system_attr(trial_id, kHeartbeatAttr, unix_seconds_now()); }

const FrozenTrial& JournalStorage::trial(int trial_id) const {
  if (!state_->trial_exists(trial_id)) throw std::out_of_range("no trial " + std::to_string(trial_id));
  return state_->trial(trial_id);
}

const std::vector<FrozenTrial>& JournalStorage::trials_of(int study_id) const {
  if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
  return state_->study_trials[study_id];
}

}  // namespace bfhpo::hpo
