// The study journal: Optuna's JournalStorage log format, byte for byte in
// meaning. One JSON object per line, op codes
//   0 CREATE_STUDY 1 DELETE_STUDY 2 SET_STUDY_USER_ATTR 3 SET_STUDY_SYSTEM_ATTR
//   4 CREATE_TRIAL 5 SET_TRIAL_PARAM 6 SET_TRIAL_STATE_VALUES
//   7 SET_TRIAL_INTERMEDIATE_VALUE 8 SET_TRIAL_USER_ATTR 9 SET_TRIAL_SYSTEM_ATTR
// and nothing else, so optuna.load_study(storage=JournalStorage(
// JournalFileStorage(path))) and optuna-dashboard open a bfhpo study unchanged.
//
// Durability and sharing:
// - Every write takes an exclusive lock on the file (flock), first replays
//   what other processes appended, checks the change is still valid against
//   that state, appends whole lines, flushes and fsyncs, then releases.
// - Replay is incremental from the last byte offset read. An incomplete last
//   line (a crash mid-write) is ignored by readers and repaired (truncated) by
//   the next writer under the lock. A corrupt line before the last one is a
//   UserError naming the file and the line number. Python's NaN / Infinity /
//   -Infinity tokens are accepted.
// - Trial ids and numbers are decided by log order, as in Optuna, so several
//   processes can create trials concurrently.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

struct StudyRecord {
  int study_id = 0;
  std::string name;
  StudyDirection direction = StudyDirection::Minimize;
  nlohmann::json user_attrs = nlohmann::json::object();
  nlohmann::json system_attrs = nlohmann::json::object();
  std::vector<int> trial_ids;  // in trial-number order
};

class Journal {
 public:
  // How lines are read: Fast reads the common lines (SET_TRIAL_PARAM,
  // SET_TRIAL_STATE_VALUES, ...) with FlatJsonObject and the rest with
  // nlohmann; Full reads every line with nlohmann. Both give the same state.
  enum class Replay { Fast, Full };

  // Opens (creating if absent) the journal file and replays it.
  explicit Journal(std::filesystem::path path, Replay replay = Replay::Fast);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A fresh worker id per Journal object ("<uuid4>-<pid>"), written in each log line.
  const std::string& worker_id() const { return worker_id_; }

  // Reads what other processes appended since the last replay.
  void sync();

  // --- studies ---
  // Returns the id of the study of that name, creating it if absent. Throws a
  // UserError when it exists with another direction.
  int get_or_create_study(const std::string& name, StudyDirection direction);
  std::optional<int> find_study(const std::string& name) const;
  const StudyRecord& study(int study_id) const;
  std::vector<StudyRecord> studies() const;
  void set_study_user_attr(int study_id, const std::string& key, const nlohmann::json& value);
  void set_study_system_attr(int study_id, const std::string& key, const nlohmann::json& value);

  // --- trials ---
  // Appends CREATE_TRIAL. With a template, its state, value, params,
  // distributions, attributes and intermediate values are written in the
  // same line (as Optuna's create_new_trial(template_trial)). Returns trial_id.
  int create_trial(int study_id, const FrozenTrial* template_trial = nullptr);
  // Appends a plain CREATE_TRIAL only if `admit` holds for the study's trials
  // as replayed under the lock, so the check and the creation are one atomic
  // step across processes. Returns the trial_id, or none when not admitted.
  std::optional<int> create_trial_if(int study_id,
                                     const std::function<bool(const std::vector<FrozenTrial>&)>& admit);
  void set_trial_param(int trial_id, const std::string& name, double internal,
                       const Distribution& distribution);
  // Returns false (and writes nothing) when the change lost a race: setting
  // RUNNING on a trial that is no longer WAITING, or changing a finished
  // trial. This is how two workers never claim one WAITING trial.
  bool set_trial_state_values(int trial_id, TrialState state, std::optional<double> value = {});
  void set_trial_intermediate_value(int trial_id, int step, double value);
  void set_trial_user_attr(int trial_id, const std::string& key, const nlohmann::json& value);
  void set_trial_system_attr(int trial_id, const std::string& key, const nlohmann::json& value);

  // A trial as of the last replay; the reference is valid until the next
  // sync() or write, either of which may append trials.
  const FrozenTrial& trial(int trial_id) const;
  // Every trial of the study in number order, as of the last replay, without
  // a copy; valid, like trial(), until the next sync() or write.
  const std::vector<FrozenTrial>& trials_of(int study_id) const;
  // A copy of trials_of(study_id), for callers that sync or write while they hold it.
  std::vector<FrozenTrial> trials(int study_id) const;

 private:
  struct State;
  std::filesystem::path path_;
  std::string worker_id_;
  Replay replay_;
  std::unique_ptr<State> state_;
};

}  // namespace bfhpo::hpo
