// The Slurm job a worker process runs in, as Slurm's environment describes
// it, so a trial's worker record (kWorkerAttr's "slurm") names the job to
// follow or cancel: the job id (the array's id for a task of a job array,
// SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID), the array task id
// (SLURM_ARRAY_TASK_ID), the node (SLURMD_NODENAME) and the GPUs Slurm bound
// (CUDA_VISIBLE_DEVICES, which Slurm sets for a job given GPUs).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace bfhpo::hpo {

struct SlurmJob {
  std::string job_id;
  std::optional<std::string> array_task_id;
  std::string node;
  std::optional<std::string> gpus;

  // "12_3" for a task of array 12, else "12": what squeue shows and scancel takes.
  std::string id() const;
  // "slurm job 12_3 on node gpu07, GPU 1"
  std::string describe() const;
};

// None outside a Slurm job (no SLURM_JOB_ID).
std::optional<SlurmJob> slurm_job_from_environment();

// {"job_id", "array_task_id", "node", "gpus"} (the optional ones only when known).
nlohmann::json to_json(const SlurmJob& job);
// The job of a worker record written by to_json; none when the record has no
// usable one (a worker outside Slurm, a record of an older bfhpo).
std::optional<SlurmJob> slurm_job_of(const nlohmann::json& worker_record);

}  // namespace bfhpo::hpo
