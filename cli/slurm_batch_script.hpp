// The sbatch script of `bfhpo launch`: a job array of `workers` tasks, each
// one worker of the study. A task's batch shell execs `bfhpo optimize`, so
// bfhpo IS the batch shell and receives what Slurm sends it: SIGTERM `grace_s`
// before the time limit (--signal=B:TERM@grace), on preemption and on
// scancel; bfhpo then fails its running trial as "preempted" and re-queues it
// for the other workers. Each task logs to its own file beside the study
// (log_pattern, with Slurm's %A array id and %a task id), appending, so a
// task Slurm requeues keeps its earlier log.
#pragma once

#include "common/config_reader.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::cli {

// The end of a log file's name: Slurm puts the array's id for %A, the task's for %a.
inline constexpr const char* kSlurmLogSuffix = ".slurm-%A_%a.log";

struct SlurmLaunch {
  std::filesystem::path bfhpo;            // the front executable, absolute
  std::filesystem::path study_file;       // absolute
  std::optional<std::string> storage;     // --storage passed on to every worker
  std::string study_name;
  std::filesystem::path log_pattern;      // absolute, e.g. /shared/s/tiny.slurm-%A_%a.log (kSlurmLogSuffix)
  int workers = 1;
  int gpus_per_worker = 0;                // 0: the worker sees no GPU; 1: the one Slurm binds
  std::optional<int> cpus_per_worker;
  std::optional<std::string> time_limit;  // Slurm's format: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S
  std::optional<std::string> partition;
  std::optional<std::string> account;
  int grace_s = 120;                      // SIGTERM this long before the time limit
  std::vector<std::string> sbatch_args;   // more #SBATCH lines, as given

  // The first problem of the request, naming the option and the fix: workers
  // >= 1, gpus 0 or 1 (a worker trains on one device), cpus >= 1, a time limit
  // in Slurm's format longer than the grace, a log path Slurm can take in an
  // #SBATCH line (no space, quote, backslash or % in the folder or before
  // kSlurmLogSuffix), sbatch arguments starting with "-", one-word partition
  // and account, and no control character in any value the script holds.
  std::optional<ConfigProblem> problem() const;
};

// The script; `launch` must have no problem().
std::string slurm_batch_script(const SlurmLaunch& launch);

}  // namespace bfhpo::cli
