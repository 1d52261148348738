// The file journal: Optuna's JournalStorage log format, byte for byte in
// meaning, over a JournalFile (the file, its lock, reads from an offset and
// appends), as Optuna's JournalStorage sits over JournalFileBackend. One JSON
// object per line, op codes
//   0 CREATE_STUDY 1 DELETE_STUDY 2 SET_STUDY_USER_ATTR 3 SET_STUDY_SYSTEM_ATTR
//   4 CREATE_TRIAL 5 SET_TRIAL_PARAM 6 SET_TRIAL_STATE_VALUES
//   7 SET_TRIAL_INTERMEDIATE_VALUE 8 SET_TRIAL_USER_ATTR 9 SET_TRIAL_SYSTEM_ATTR
// and nothing else, so optuna.load_study(storage=JournalStorage(
// JournalFileStorage(path))) and optuna-dashboard open a bfhpo study
// unchanged. Op code 10 (DISCARD_TRIALS, Rustuna's) is skipped with a
// warning, as Optuna 5 skips it; any other unknown op code is a corrupt line.
//
// - Every write takes the file's write lock, replays what other processes
//   appended, checks the change is still valid against that state, appends
//   whole lines, fsyncs, then releases (JournalFile says what it repairs).
// - Replay is incremental from the last byte offset applied. A last record
//   without its '\n' is applied when it is a whole JSON object (as Optuna
//   reads it) and ignored otherwise (a write in progress, or torn). A corrupt
//   line before the last one is a UserError naming the file and the line
//   number. Python's NaN / Infinity / -Infinity tokens are accepted.
// - Trial ids and numbers are decided by log order; a writer learns the id
//   of a trial it created from its own worker_id in the replayed log.
#pragma once

#include "hpo/storage/journal_file.hpp"
#include "hpo/storage/storage.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

class JournalStorage final : public Storage {
 public:
  // How lines are read: Fast reads the common lines (SET_TRIAL_PARAM,
  // SET_TRIAL_STATE_VALUES, ...) with FlatJsonObject and the rest with
  // nlohmann; Full reads every line with nlohmann. Both give the same state.
  enum class Replay { Fast, Full };

  // Opens the journal file (ReadWrite creates it when absent) and replays it.
  explicit JournalStorage(std::filesystem::path path, StorageAccess access = StorageAccess::ReadWrite,
                          Replay replay = Replay::Fast);
  ~JournalStorage() override;

  const std::filesystem::path& path() const { return file_.path(); }
  // A fresh worker id per object ("<uuid4>-<pid>"), written in each log line.
  const std::string& worker_id() const { return worker_id_; }

  std::string location() const override { return path().string(); }
  void sync() override;

  int get_or_create_study(const std::string& name, const Directions& directions) override;
  std::optional<int> find_study(const std::string& name) const override;
  std::vector<StudyRecord> studies() const override;
  void set_study_user_attr(int study_id, const std::string& key, const nlohmann::json& value);
  void set_study_system_attr(int study_id, const std::string& key, const nlohmann::json& value) override;

  int create_trial(int study_id, const FrozenTrial* template_trial = nullptr) override;
  std::optional<int> create_trial_if(int study_id, const Admission& admit, const nlohmann::json& system_attrs) override;
  std::optional<int> claim_waiting_trial(int study_id, const Admission& admit,
                                         const nlohmann::json& system_attrs) override;
  void set_trial_params(int trial_id, const Params& params,
                        const std::map<std::string, Distribution>& distributions) override;
  bool set_trial_state_values(int trial_id, TrialState state, const std::vector<double>& values = {}) override;
  void set_trial_intermediate_value(int trial_id, int step, double value) override;
  void set_trial_user_attr(int trial_id, const std::string& key, const nlohmann::json& value) override;
  void set_trial_system_attr(int trial_id, const std::string& key, const nlohmann::json& value) override;
  void record_heartbeat(int trial_id) override;

  const FrozenTrial& trial(int trial_id) const override;
  const std::vector<FrozenTrial>& trials_of(int study_id) const override;
  // A copy of trials_of(study_id), for callers that sync or write while they hold it.
  std::vector<FrozenTrial> trials(int study_id) const { return trials_of(study_id); }

 private:
  struct State;
  // Under the write lock: replays, asks `records` for the log records to
  // append given that state (none: the change is vetoed), appends them in
  // one write and replays them. Returns whether it wrote.
  template <class Records>
  bool append_locked(Records records);
  nlohmann::json base_log(int op_code) const;

  JournalFile file_;
  std::string worker_id_;
  Replay replay_;
  std::unique_ptr<State> state_;
};

}  // namespace bfhpo::hpo
