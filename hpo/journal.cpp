#include "hpo/journal.hpp"

#include "common/user_error.hpp"
#include "hpo/flat_json.hpp"
#include "hpo/journal_json.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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

// Exclusive flock on the journal for the scope; released by the kernel if the process dies.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw std::runtime_error(std::string("flock failed: ") + std::strerror(errno));
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

struct Journal::State {
  int fd = -1;
  std::uint64_t offset = 0;     // bytes of complete lines applied
  std::uint64_t lines_read = 0;  // complete lines applied
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
  void add_trial(int study_id, FrozenTrial t) {
    t.trial_id = n_trials();
    t.number = static_cast<int>(studies[study_id].trial_ids.size());
    studies[study_id].trial_ids.push_back(t.trial_id);
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
                        std::optional<std::string> datetime_complete, std::optional<double> value) {
    FrozenTrial& t = trial(id);
    if (datetime_start) t.datetime_start = std::move(*datetime_start);
    t.state = state;
    if (datetime_complete) t.datetime_complete = std::move(*datetime_complete);
    if (value) t.value = value;
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
        study.direction = static_cast<StudyDirection>(log.at("directions").at(0).get<int>());
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
        if (log.contains("value") && !log["value"].is_null()) t.value = log["value"].get<double>();
        if (log.contains("values") && log["values"].is_array() && !log["values"].empty())
          t.value = log["values"][0].get<double>();
        if (log.contains("intermediate_values"))
          for (const auto& item : log["intermediate_values"].items())
            t.intermediate_values[std::stoi(item.key())] = item.value().get<double>();
        if (log.contains("datetime_start") && log["datetime_start"].is_string())
          t.datetime_start = log["datetime_start"].get<std::string>();
        if (log.contains("datetime_complete") && log["datetime_complete"].is_string())
          t.datetime_complete = log["datetime_complete"].get<std::string>();
        add_trial(study_id, std::move(t));
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
        std::optional<double> value;
        if (state == TrialState::Running && log.contains("datetime_start"))
          start = log["datetime_start"].get<std::string>();
        if (finished(state) && log.contains("datetime_complete"))
          complete = log["datetime_complete"].get<std::string>();
        if (log.contains("values") && log["values"].is_array() && !log["values"].empty())
          value = log["values"][0].get<double>();
        set_state_values(id, state, std::move(start), std::move(complete), value);
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
        add_trial(id, std::move(t));
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
        std::optional<double> value;
        if (!integer("trial_id", id) || !integer("state", state) || !optional_string("datetime_start", start, false) ||
            !optional_string("datetime_complete", complete, false))
          return false;
        if (const auto* values = log.find("values"); values && values->kind != Kind::Null) {
          if (values->kind != Kind::NumberArray) return false;
          if (values->array_size > 0) value = values->number;
        }
        if (!trial_updatable(id)) return true;
        const auto s = trial_state_from_code(state);
        if (s == TrialState::Running && trial(id).state == TrialState::Running) return true;
        if (s != TrialState::Running) start.reset();
        if (!finished(s)) complete.reset();
        set_state_values(id, s, std::move(start), std::move(complete), value);
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

  void apply_line(const std::string_view line, Journal::Replay replay) {
    if (replay == Journal::Replay::Fast) {
      if (scanned.scan(line) && apply_scanned(scanned)) return;
    }
    apply(parse_python_json(std::string(line)));
  }
};

Journal::Journal(std::filesystem::path path, Replay replay)
    : path_(std::move(path)), worker_id_(make_worker_id()), replay_(replay), state_(std::make_unique<State>()) {
  state_->fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (state_->fd < 0)
    throw UserError::at(path_.string(), "", std::string("cannot open the journal: ") + std::strerror(errno),
                        "check that the folder exists and is writable");
  sync();
}

Journal::~Journal() {
  if (state_ && state_->fd >= 0) ::close(state_->fd);
}

void Journal::sync() {
  struct stat info {};
  if (::fstat(state_->fd, &info) != 0) throw std::runtime_error("fstat of the journal failed");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size <= state_->offset) return;
  // Read in chunks, so a long journal is never held in memory at once.
  constexpr std::uint64_t kChunk = 1 << 20;
  std::string pending;  // bytes after the last complete line applied
  pending.reserve(2 * kChunk);
  std::uint64_t read_at = state_->offset;
  while (read_at < size) {
    const std::size_t old = pending.size();
    pending.resize(old + std::min(kChunk, size - read_at));
    ssize_t n = ::pread(state_->fd, pending.data() + old, pending.size() - old, static_cast<off_t>(read_at));
    if (n < 0 && errno == EINTR) {
      pending.resize(old);
      continue;
    }
    if (n <= 0) break;
    pending.resize(old + static_cast<std::size_t>(n));
    read_at += static_cast<std::uint64_t>(n);
    std::size_t start = 0;
    for (std::size_t end = pending.find('\n', old); end != std::string::npos; end = pending.find('\n', start)) {
      const std::string_view line(pending.data() + start, end - start);
      const std::uint64_t line_number = state_->lines_read + 1;
      try {
        state_->apply_line(line, replay_);
      } catch (const std::exception& e) {
        throw UserError::at(path_.string(), "line " + std::to_string(line_number),
                            std::string("corrupt journal line (") + e.what() + ")",
                            "restore the journal from a backup, or delete that line if you know what it held");
      }
      state_->lines_read = line_number;
      state_->offset += end - start + 1;
      start = end + 1;
    }
    pending.erase(0, start);
  }
  // What remains after the last newline is an incomplete line: ignored until a writer repairs it.
}

// Appends one log line under the lock: replays what others wrote, lets
// `still_valid` veto the change against that state, repairs an incomplete last
// line, writes, fsyncs, and applies the line by replaying it.
template <class Check>
static bool append_locked(Journal& journal, int fd, std::uint64_t& offset, const json& log, Check still_valid,
                          const std::filesystem::path& path) {
  FileLock lock(fd);
  journal.sync();
  if (!still_valid()) return false;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && static_cast<std::uint64_t>(info.st_size) > offset) {
    if (::ftruncate(fd, static_cast<off_t>(offset)) != 0)
      throw UserError::at(path.string(), "", "cannot repair an incomplete last line", "check the journal is writable");
  }
  const std::string line = dump_python_json(log) + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      // Drop the partial line now; if that fails too, the next writer repairs it.
      (void)!::ftruncate(fd, static_cast<off_t>(offset));
      throw UserError::at(path.string(), "", std::string("cannot append to the journal: ") + std::strerror(err),
                          "free disk space; nothing recorded so far was lost");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw UserError::at(path.string(), "", "fsync failed", "check the disk");
  journal.sync();
  return true;
}

namespace {
json base_log(int op, const std::string& worker) { return json{{"op_code", op}, {"worker_id", worker}}; }
}  // namespace

int Journal::get_or_create_study(const std::string& name, StudyDirection direction) {
  json log = base_log(kCreateStudy, worker_id_);
  log["study_name"] = name;
  log["directions"] = {static_cast<int>(direction)};
  append_locked(*this, state_->fd, state_->offset, log, [&] { return !find_study(name); }, path_);
  int id = *find_study(name);
  if (study(id).direction != direction)
    throw UserError::at(path_.string(), "direction",
                        "study '" + name + "' was created to " + to_string(study(id).direction) +
                            ", the study file says " + to_string(direction),
                        "use the journal's direction or a new storage file");
  return id;
}

std::optional<int> Journal::find_study(const std::string& name) const {
  for (const auto& s : state_->studies)
    if (!state_->study_deleted[s.study_id] && s.name == name) return s.study_id;
  return std::nullopt;
}

const StudyRecord& Journal::study(int study_id) const {
  if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
  return state_->studies[study_id];
}

std::vector<StudyRecord> Journal::studies() const {
  std::vector<StudyRecord> out;
  for (const auto& s : state_->studies)
    if (!state_->study_deleted[s.study_id]) out.push_back(s);
  return out;
}

void Journal::set_study_user_attr(int study_id, const std::string& key, const json& value) {
  json log = base_log(kSetStudyUserAttr, worker_id_);
  log["study_id"] = study_id;
  log["user_attr"] = {{key, value}};
  append_locked(*this, state_->fd, state_->offset, log, [] { return true; }, path_);
}

void Journal::set_study_system_attr(int study_id, const std::string& key, const json& value) {
  json log = base_log(kSetStudySystemAttr, worker_id_);
  log["study_id"] = study_id;
  log["system_attr"] = {{key, value}};
  append_locked(*this, state_->fd, state_->offset, log, [] { return true; }, path_);
}

int Journal::create_trial(int study_id, const FrozenTrial* templ) {
  json log = base_log(kCreateTrial, worker_id_);
  log["study_id"] = study_id;
  log["datetime_start"] = isoformat_now();
  if (templ) {
    log["state"] = static_cast<int>(templ->state);
    if (templ->state == TrialState::Waiting) log["datetime_start"] = nullptr;
    if (templ->value) log["value"] = *templ->value;
    json params = json::object(), distributions = json::object(), intermediate = json::object();
    for (const auto& [name, v] : templ->params) params[name] = v;
    for (const auto& [name, d] : templ->distributions) distributions[name] = distribution_to_optuna_json(d);
    for (const auto& [step, v] : templ->intermediate_values) intermediate[std::to_string(step)] = v;
    log["params"] = params;
    log["distributions"] = distributions;
    log["user_attrs"] = templ->user_attrs;
    log["system_attrs"] = templ->system_attrs;
    log["intermediate_values"] = intermediate;
    if (templ->is_finished()) log["datetime_complete"] = isoformat_now();
  }
  int created = -1;
  append_locked(*this, state_->fd, state_->offset, log, [&] {
    if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
    created = state_->n_trials();
    return true;
  }, path_);
  return created;
}

std::optional<int> Journal::create_trial_if(int study_id,
                                            const std::function<bool(const std::vector<FrozenTrial>&)>& admit) {
  json log = base_log(kCreateTrial, worker_id_);
  log["study_id"] = study_id;
  log["datetime_start"] = isoformat_now();
  std::optional<int> created;
  append_locked(*this, state_->fd, state_->offset, log, [&] {
    if (!state_->study_exists(study_id)) throw std::out_of_range("no study " + std::to_string(study_id));
    if (!admit(trials_of(study_id))) return false;
    created = state_->n_trials();
    return true;
  }, path_);
  return created;
}

void Journal::set_trial_param(int trial_id, const std::string& name, double internal, const Distribution& distribution) {
  json log = base_log(kSetTrialParam, worker_id_);
  log["trial_id"] = trial_id;
  log["param_name"] = name;
  log["param_value_internal"] = internal;
  log["distribution"] = distribution_to_optuna_json(distribution);
  append_locked(*this, state_->fd, state_->offset, log, [&] { return state_->trial_updatable(trial_id); }, path_);
}

bool Journal::set_trial_state_values(int trial_id, TrialState state, std::optional<double> value) {
  json log = base_log(kSetTrialStateValues, worker_id_);
  log["trial_id"] = trial_id;
  log["state"] = static_cast<int>(state);
  log["values"] = value ? json::array({*value}) : json(nullptr);
  if (state == TrialState::Running) log["datetime_start"] = isoformat_now();
  if (state == TrialState::Complete || state == TrialState::Pruned || state == TrialState::Fail)
    log["datetime_complete"] = isoformat_now();
  return append_locked(*this, state_->fd, state_->offset, log, [&] {
    if (!state_->trial_updatable(trial_id)) return false;
    return state != TrialState::Running || state_->trial(trial_id).state == TrialState::Waiting;
  }, path_);
}

void Journal::set_trial_intermediate_value(int trial_id, int step, double value) {
  json log = base_log(kSetTrialIntermediateValue, worker_id_);
  log["trial_id"] = trial_id;
  log["step"] = step;
  log["intermediate_value"] = value;
  append_locked(*this, state_->fd, state_->offset, log, [&] { return state_->trial_updatable(trial_id); }, path_);
}

void Journal::set_trial_user_attr(int trial_id, const std::string& key, const json& value) {
  json log = base_log(kSetTrialUserAttr, worker_id_);
  log["trial_id"] = trial_id;
  log["user_attr"] = {{key, value}};
  append_locked(*this, state_->fd, state_->offset, log, [&] { return state_->trial_updatable(trial_id); }, path_);
}

void Journal::set_trial_system_attr(int trial_id, const std::string& key, const json& value) {
  json log = base_log(kSetTrialSystemAttr, worker_id_);
  log["trial_id"] = trial_id;
  log["system_attr"] = {{key, value}};
  append_locked(*this, state_->fd, state_->offset, log, [&] { return state_->trial_updatable(trial_id); }, path_);
}

const FrozenTrial& Journal::trial(int trial_id) const {
  if (!state_->trial_exists(trial_id)) throw std::out_of_range("no trial " + std::to_string(trial_id));
  return state_->trial(trial_id);
}

const std::vector<FrozenTrial>& Journal::trials_of(int study_id) const {
  return state_->study_trials[study(study_id).study_id];  // study() throws for a missing or deleted one
}

std::vector<FrozenTrial> Journal::trials(int study_id) const { return trials_of(study_id); }

}  // namespace bfhpo::hpo
