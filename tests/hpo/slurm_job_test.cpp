// A worker in a Slurm job records the job (array id and task) and the node on
// the trials it runs, read from Slurm's environment; outside Slurm, nothing.
#include "hpo/sampler_factory.hpp"
#include "hpo/slurm_job.hpp"
#include "hpo/study.hpp"
#include "scratch_folder.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

// Sets Slurm's variables for one test and unsets them after.
struct SlurmEnvironment {
  std::map<std::string, std::string> variables;
  explicit SlurmEnvironment(std::map<std::string, std::string> values) : variables(std::move(values)) {
    for (const auto& [name, value] : variables) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~SlurmEnvironment() {
    for (const auto& entry : variables) ::unsetenv(entry.first.c_str());
  }
};

const std::map<std::string, std::string> kArrayTask = {{"SLURM_JOB_ID", "4711"},
                                                        {"SLURM_ARRAY_JOB_ID", "4700"},
                                                        {"SLURM_ARRAY_TASK_ID", "2"},
                                                        {"SLURMD_NODENAME", "gpu07"},
                                                        {"CUDA_VISIBLE_DEVICES", "3"}};

}  // namespace

TEST_CASE("a task of a job array is named by the array's id and its task id, as squeue and scancel name it") {
  SlurmEnvironment environment(kArrayTask);
  const auto job = slurm_job_from_environment();
  REQUIRE(job);
  CHECK(job->id() == "4700_2");
  CHECK(job->node == "gpu07");
  CHECK(job->describe() == "slurm job 4700_2 on node gpu07, GPU 3");
  CHECK(slurm_job_of(json{{"slurm", to_json(*job)}})->describe() == job->describe());
}

TEST_CASE("a plain Slurm job is named by its job id; outside Slurm there is no job") {
  {
    SlurmEnvironment environment({{"SLURM_JOB_ID", "88"}, {"SLURMD_NODENAME", "n1"}});
    const auto job = slurm_job_from_environment();
    REQUIRE(job);
    CHECK(job->describe() == "slurm job 88 on node n1");
  }
  CHECK_FALSE(slurm_job_from_environment());
  CHECK_FALSE(slurm_job_of(json{{"host", "h"}, {"pid", 1}}));
}

TEST_CASE("a worker in a Slurm job records the job, its array task and node on the trial it runs") {
  ScratchFolder scratch("slurm_job_test", "worker");
  const StudySpec spec = parse_study_spec(
      json::parse(R"({"name": "unit", "direction": "minimize", "n_trials": 2,
                      "search_space": {"x": {"type": "float", "low": -3, "high": 3}}})"),
      scratch.dir / "study.json");
  SlurmEnvironment environment(kArrayTask);
  Study study(spec, make_sampler(spec));
  const AskedTrial asked = *study.ask_if_room();
  const json worker = study.trial(asked.number).system_attrs.at(kWorkerAttr);
  CHECK(worker.at("slurm") == json({{"job_id", "4700"}, {"array_task_id", "2"}, {"node", "gpu07"}, {"gpus", "3"}}));
  CHECK(worker.at("pid") == ::getpid());
}
