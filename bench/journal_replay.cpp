// Replay speed: writes a journal of N trials (default 100,000; each with 10
// params, a value and COMPLETE) as Optuna would, then times a fresh Journal
// replaying it plus the copy of its trials. Prints JSON with the seconds.
// `bench_journal_replay N full` replays with nlohmann for every line.
#include "hpo/journal.hpp"

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
  const auto replay = full ? hpo::Journal::Replay::Full : hpo::Journal::Replay::Fast;
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
  auto start = std::chrono::steady_clock::now();
  hpo::Journal journal(path, replay);
  const double replay_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto trials = journal.trials(0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << nlohmann::json{{"replay", full ? "full" : "fast"}, {"trials", trials.size()}, {"bytes", bytes},
                              {"replay_s", seconds}, {"of_which_trials_copy_s", seconds - replay_s}, {"target_s", 1.0}}
                   .dump()
            << std::endl;
  std::filesystem::remove(path);
  return trials.size() == static_cast<std::size_t>(n) ? 0 : 1;
}
