// study.json, parsed and validated through the one config reader
// (common/config_reader.hpp): an unknown key anywhere is an error naming the
// closest valid key. The training sections (simulator, training,
// approximator, memory, objective) are known here by name and read by the
// trials layer (trials/trial_config.hpp, trials/study_settings.hpp) from
// `document`; a study without a "simulator" section is an external-objective
// study whose trials are evaluated by whoever calls ask and tell. The
// search space may be left out: such a study trains one configuration.
//
// What the study optimizes ("direction", or "objectives" and "constraints")
// is read by hpo/study_objectives.hpp.
//
//   {"name": "demo", "direction": "minimize", "n_trials": 100, "seed": 1,
//    "timeout_s": 3600, "storage": "demo.journal",
//    "sampler": {"type": "tpe", "n_startup_trials": 10},
//    "pruner": {"type": "median", "n_warmup_steps": 2},
//    "search_space": {...}}
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/search_space.hpp"
#include "hpo/study_objectives.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace bfhpo::hpo {

struct StudySpec {
  std::filesystem::path source;  // the study file
  std::string name;
  std::vector<ObjectiveSpec> objectives = {ObjectiveSpec{}};  // at least one
  std::vector<ConstraintSpec> constraints;
  int n_trials = 100;  // finished trials the study holds when done, resumed runs included
  std::optional<double> timeout_s;
  std::uint64_t seed = 0;
  nlohmann::json sampler = {{"type", "tpe"}};  // "type" plus that sampler's options
  nlohmann::json pruner = {{"type", "none"}};  // "type" plus that pruner's options
  SearchSpace search_space;
  // A journal path (default "<study file>.journal" beside it; relative paths
  // are relative to the study file) or a postgresql:// URL, kept as written.
  std::filesystem::path storage;
  // A RUNNING trial whose worker cannot be checked by its pid (another host,
  // an ask/tell caller) counts as abandoned after this long without a
  // heartbeat ("stale_after_s"; a worker's heartbeat comes every 10 s).
  double stale_after_s = 120.0;
  nlohmann::json document;        // the whole file

  Directions directions() const;
  bool multi_objective() const { return objectives.size() > 1; }
  // The study file names its objectives' metrics ("objectives"), rather than one unnamed objective.
  bool named_objectives() const { return !objectives.front().metric.empty(); }
  bool has_simulator() const { return document.contains("simulator"); }
  // The verbs that propose trials (optimize, ask, enqueue) need a search
  // space; a study without one trains one configuration (`bfhpo train`).
  // Throws UserError naming the file, the verb and the fix.
  void require_search_space(const std::string& verb) const;
};

// Throws UserError naming the file, the field and the fix. `storage_override`
// (the CLI's --storage) replaces the file's "storage": a journal path relative
// to the working folder, as any command-line path, or a postgresql:// URL.
// With a PostgreSQL storage, a study name or a parameter name longer than
// Optuna's schema holds (512 characters) is refused here, before anything is
// written.
StudySpec load_study_spec(const std::filesystem::path& file,
                          const std::optional<std::string>& storage_override = std::nullopt);
StudySpec parse_study_spec(const nlohmann::json& document, const std::filesystem::path& source);

}  // namespace bfhpo::hpo
