// Replay speed: writes a journal of N trials (default 100,000; each with 10
// params, a value and COMPLETE) as Optuna would, then times what a reader
// pays to see them: opening a fresh JournalStorage, replaying it and getting its
// trials (trials_of, as Study's sampler, pruner and counts use them). Also
// times, apart, a copy of them (trials(), as `bfhpo status` / export take
// them). Prints JSON with the seconds. `bench_journal_replay N full` replays
// with nlohmann for every line.
#include "hpo/storage/journal_storage.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace bfhpo;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 100000;
  const bool full = argc > 2 && std::string(argv[2]) == "full";
  const auto replay = full ? hpo::JournalStorage::Replay::Full : hpo::JournalStorage::Replay::Fast;
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "bfhpo_replay_bench.journal";
  {
    std::ofstream out(path, std::ios::trunc);
    const std::string dist = R"({"name": "FloatDistribution", "attributes": {"step": null, "low": -5.0, "high": 5.0, "log": false}})";
    out << R"({"op_code": 0, "worker_id": "w", "study_name": "replay", "directions": [1]})" << "\n";
    for (int i = 0; i < n; ++i) {
      out << R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": "2026-12-02T10:00:00.000000"})" << "\n";
      for (int d = 0; d < 10; ++d)
        out << nlohmann::json{{"op_code", 5}, {"worker_id", "w"}, {"trial_id", i}, {"param_name", "x" + std::to_string(d)},
                              {"param_value_internal", 0.1 * d}, {"distribution", dist}}.dump() << "\n";
      out << nlohmann::json{{"op_code", 6}, {"worker_id", "w"}, {"trial_id", i}, {"state", 1}, {"values", {1.0 * i}},
                            {"datetime_complete", "2026-12-02T10:00:01.000000"}}.dump() << "\n";
    }
  }
  const auto bytes = std::filesystem::file_size(path);
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto start = std::chrono::steady_clock::now();
  hpo::JournalStorage journal(path, hpo::StorageAccess::ReadWrite, replay);
  const std::vector<hpo::FrozenTrial>& trials = journal.trials_of(0);
  const double replay_s = since(start);
  start = std::chrono::steady_clock::now();
  const std::size_t copied = journal.trials(0).size();
  const double copy_s = since(start);
  std::cout << nlohmann::json{{"replay", full ? "full" : "fast"}, {"trials", trials.size()}, {"bytes", bytes},
                              {"replay_s", replay_s}, {"target_s", 1.0}, {"copy_of_trials_s", copy_s}}
                   .dump()
            << std::endl;
  std::filesystem::remove(path);
  return trials.size() == static_cast<std::size_t>(n) && copied == trials.size() ? 0 : 1;
}
