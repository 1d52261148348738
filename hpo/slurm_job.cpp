#include "hpo/slurm_job.hpp"

#include <cstdlib>

namespace bfhpo::hpo {
namespace {

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> string_member(const nlohmann::json& object, const char* key) {
  const auto member = object.find(key);
  if (member == object.end() || !member->is_string()) return std::nullopt;
  return member->get<std::string>();
}

}  // namespace

std::string SlurmJob::id() const { return array_task_id ? job_id + "_" + *array_task_id : job_id; }

std::string SlurmJob::describe() const {
  return "slurm job " + id() + " on node " + node + (gpus ? ", GPU " + *gpus : "");
}

std::optional<SlurmJob> slurm_job_from_environment() {
  const auto job_id = environment("SLURM_JOB_ID");
  if (!job_id) return std::nullopt;
  SlurmJob job;
  job.array_task_id = environment("SLURM_ARRAY_TASK_ID");
  job.job_id = job.array_task_id ? environment("SLURM_ARRAY_JOB_ID").value_or(*job_id) : *job_id;
  job.node = environment("SLURMD_NODENAME").value_or("?");
  job.gpus = environment("CUDA_VISIBLE_DEVICES");
  return job;
}

nlohmann::json to_json(const SlurmJob& job) {
  nlohmann::json out = {{"job_id", job.job_id}, {"node", job.node}};
  if (job.array_task_id) out["array_task_id"] = *job.array_task_id;
  if (job.gpus) out["gpus"] = *job.gpus;
  return out;
}

std::optional<SlurmJob> slurm_job_of(const nlohmann::json& worker_record) {
  if (!worker_record.is_object() || !worker_record.contains("slurm") || !worker_record["slurm"].is_object())
    return std::nullopt;
  const nlohmann::json& record = worker_record["slurm"];
  const auto job_id = string_member(record, "job_id");
  const auto node = string_member(record, "node");
  if (!job_id || !node) return std::nullopt;
  return SlurmJob{*job_id, string_member(record, "array_task_id"), *node, string_member(record, "gpus")};
}

}  // namespace bfhpo::hpo
