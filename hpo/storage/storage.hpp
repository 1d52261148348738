// Where a study's trials live: the operations a Study needs from a storage,
// as Optuna's Study needs BaseStorage, kept small. Implementations: the file
// journal (JournalStorage, Optuna's JournalStorage log) and PostgreSQL in
// Optuna's RDB schema; open_storage() picks one from a study's "storage".
//
// Contract every implementation keeps:
// - Several processes, on several hosts where the storage allows it, may
//   drive one study at once. Each write is atomic and durable when it returns.
// - Views (trial, trials_of, studies) are a cache as of the last sync() or
//   write of this object; sync() reads what others wrote since then.
// - Trial ids are unique in the storage; a trial's number is its position
//   among its study's trials, decided by the order in which the storage
//   recorded their creation, so concurrent creators never share a number.
// - A finished trial (COMPLETE, PRUNED, FAIL) never changes again.
// - Errors a user can cause or fix (an unreachable server, a full disk, a
//   read-only file) are bfhpo::UserError naming the storage; nothing already
//   recorded is lost by a failed write.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::hpo {

// Whether a storage may be written. ReadOnly opens need no write permission
// and write nothing (status, export); a write through one is a logic_error.
enum class StorageAccess { ReadWrite, ReadOnly };

// System attribute holding a trial's last sign of life, unix seconds. Every
// storage reports the latest heartbeat of a trial under this key of its
// system_attrs, wherever it keeps it.
inline constexpr const char* kHeartbeatAttr = "bfhpo:heartbeat";

struct StudyRecord {
  int study_id = 0;
  std::string name;
  Directions directions = {StudyDirection::Minimize};  // one per objective
  nlohmann::json user_attrs = nlohmann::json::object();
  nlohmann::json system_attrs = nlohmann::json::object();
};

// Decides, from a study's trials as the storage holds them at that instant
// (under its lock or in its transaction), whether one more trial may start.
using Admission = std::function<bool(const std::vector<FrozenTrial>&)>;

class Storage {
 public:
  virtual ~Storage() = default;

  // The file path or the URL (password hidden), for messages.
  virtual std::string location() const = 0;
  // Reads what other processes wrote since the last sync or write.
  virtual void sync() = 0;

  // --- studies ---
  // The id of the study of that name, creating it if absent. UserError when
  // it exists with other directions.
  virtual int get_or_create_study(const std::string& name, const Directions& directions) = 0;
  virtual std::optional<int> find_study(const std::string& name) const = 0;
  virtual std::vector<StudyRecord> studies() const = 0;
  // Sets a study system attribute (Optuna's set_study_system_attr), e.g. the metric names.
  virtual void set_study_system_attr(int study_id, const std::string& key, const nlohmann::json& value) = 0;

  // --- creating and claiming trials ---
  // A new trial, RUNNING with its start time, or a copy of `template_trial`
  // (state, value, params, distributions, attributes, intermediate values),
  // as Optuna's create_new_trial. Returns its trial id.
  virtual int create_trial(int study_id, const FrozenTrial* template_trial = nullptr) = 0;
  // A new RUNNING trial carrying `system_attrs`, created only if `admit`
  // holds for the study's trials at that instant: the check and the creation
  // are one atomic step for every process sharing the storage. Returns the
  // trial id, or none when not admitted.
  virtual std::optional<int> create_trial_if(int study_id, const Admission& admit,
                                             const nlohmann::json& system_attrs) = 0;
  // The study's oldest WAITING trial becomes RUNNING and gets `system_attrs`,
  // if `admit` holds, in one atomic step: two processes never claim one
  // trial. Returns its trial id, or none (no WAITING trial, or not admitted).
  virtual std::optional<int> claim_waiting_trial(int study_id, const Admission& admit,
                                                 const nlohmann::json& system_attrs) = 0;

  // --- changing a trial (ignored by the storage once the trial is finished) ---
  // Sets every param with its distribution in one write.
  virtual void set_trial_params(int trial_id, const Params& params,
                                const std::map<std::string, Distribution>& distributions) = 0;
  // False (and nothing written) when the change lost a race: RUNNING on a
  // trial that is no longer WAITING, or any change of a finished trial.
  virtual bool set_trial_state_values(int trial_id, TrialState state, const std::vector<double>& values = {}) = 0;
  virtual void set_trial_intermediate_value(int trial_id, int step, double value) = 0;
  virtual void set_trial_user_attr(int trial_id, const std::string& key, const nlohmann::json& value) = 0;
  virtual void set_trial_system_attr(int trial_id, const std::string& key, const nlohmann::json& value) = 0;
  // Records a sign of life now (seen as system_attrs[kHeartbeatAttr]).
  virtual void record_heartbeat(int trial_id) = 0;

  // --- reading (as of the last sync or write) ---
  // Throws std::out_of_range for an unknown id. The reference is valid until
  // the next sync() or write, either of which may add trials.
  virtual const FrozenTrial& trial(int trial_id) const = 0;
  // Every trial of the study in number order (index == number), without a copy; valid as trial().
  virtual const std::vector<FrozenTrial>& trials_of(int study_id) const = 0;
};

double unix_seconds_now();

}  // namespace bfhpo::hpo
