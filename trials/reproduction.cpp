#include "trials/reproduction.hpp"

#include "common/user_error.hpp"
#include "hpo/trial_attrs.hpp"

#include <torch/version.h>

namespace bfhpo::trials {

using nlohmann::json;

json TrainedWith::to_json() const {
  return {{"trial", trial},
          {"seed", seed},
          {"threads", threads ? json(*threads) : json()},
          {"device", device},
          {"libtorch", libtorch},
          {"oom_attempts", oom_attempts},
          {"validation_loss", validation_loss ? json(*validation_loss) : json()}};
}

TrainedWith TrainedWith::from_json(const json& value, const std::string& source) {
  try {
    TrainedWith out;
    out.trial = value.at("trial").get<int>();
    out.seed = value.at("seed").get<uint64_t>();
    if (!value.at("threads").is_null()) out.threads = value["threads"].get<int>();
    out.device = value.at("device").get<std::string>();
    out.libtorch = value.at("libtorch").get<std::string>();
    out.oom_attempts = value.at("oom_attempts").get<int>();
    if (!value.at("validation_loss").is_null()) out.validation_loss = value["validation_loss"].get<double>();
    return out;
  } catch (const json::exception& e) {
    throw UserError::at(source, "trained_with", std::string("malformed: ") + e.what(),
                        "use the file `bfhpo export --best` wrote, unchanged");
  }
}

TrainedWith trained_with(const hpo::FrozenTrial& trial, uint64_t fallback_seed) {
  TrainedWith out;
  out.trial = trial.number;
  const json* seed = hpo::system_attr(trial, "bfhpo:seed", hpo::AttrType::Integer);
  out.seed = seed && seed->is_number_unsigned() ? seed->get<uint64_t>() : fallback_seed;
  if (const auto threads = hpo::integer_attr(trial, "bfhpo:threads")) out.threads = static_cast<int>(*threads);
  out.device = hpo::string_attr(trial, "bfhpo:device").value_or("");
  out.libtorch = hpo::string_attr(trial, "bfhpo:libtorch").value_or("");
  out.oom_attempts = static_cast<int>(hpo::integer_attr(trial, "bfhpo:oom_attempts").value_or(0));
  if (trial.user_attrs.contains("val_nll") && trial.user_attrs["val_nll"].is_number())
    out.validation_loss = trial.user_attrs["val_nll"].get<double>();
  return out;
}

std::vector<std::string> reproduction_obstacles(const TrainedWith& trial, uint64_t seed, const std::string& device,
                                                int threads) {
  std::vector<std::string> obstacles;
  if (seed != trial.seed)
    obstacles.push_back("seed " + std::to_string(seed) + ", the trial trained with seed " + std::to_string(trial.seed));
  if (device.rfind("cpu", 0) != 0)
    obstacles.push_back("device " + device + ": only CPU runs are bitwise reproducible");
  else if (!trial.device.empty() && trial.device.rfind("cpu", 0) != 0)
    obstacles.push_back("the trial trained on " + trial.device + ", this run on " + device);
  if (!trial.threads)
    obstacles.push_back("the trial did not record its thread count");
  else if (*trial.threads != threads)
    obstacles.push_back(std::to_string(threads) + " training threads, the trial had " + std::to_string(*trial.threads) +
                        " (set training.threads to " + std::to_string(*trial.threads) + " or OMP_NUM_THREADS=" +
                        std::to_string(*trial.threads) + ")");
  if (trial.libtorch.empty())
    obstacles.push_back("the trial did not record its LibTorch version");
  else if (trial.libtorch != TORCH_VERSION)
    obstacles.push_back(std::string("LibTorch ") + TORCH_VERSION + ", the trial had " + trial.libtorch);
  if (trial.oom_attempts > 0)
    obstacles.push_back("the trial took " + std::to_string(trial.oom_attempts) +
                        " OOM retries that changed its batch size or item chunk mid-run");
  return obstacles;
}

}  // namespace bfhpo::trials
