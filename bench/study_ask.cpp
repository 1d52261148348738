// End-to-end ask: Study::ask on a storage of N finished trials (default
// 1000; 10 float params, COMPLETE), storage writes (journal fsyncs, database
// transactions) included, each asked trial told FAIL so the study stays at N
// finished trials for TPE. Prints median and p95 in milliseconds as JSON.
//   bench_study_ask [N] [STORAGE]   STORAGE: a journal path (default: a
//   temporary file, recreated) or a postgresql:// URL of an empty database.
#include "hpo/sampler_factory.hpp"
#include "hpo/storage/open_storage.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "hpo/study.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

using namespace bfhpo;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 1000, repeats = 30;
  const std::string storage =
      argc > 2 ? argv[2] : (std::filesystem::temp_directory_path() / "bfhpo_study_ask_bench.journal").string();
  const bool is_file = !hpo::is_postgres_url(storage);
  if (is_file) std::filesystem::remove(storage);
  nlohmann::json space = nlohmann::json::object();
  for (int d = 0; d < 10; ++d) space["x" + std::to_string(d)] = {{"type", "float"}, {"low", -5.0}, {"high", 5.0}};
  const hpo::StudySpec spec = hpo::parse_study_spec(
      {{"name", "ask"}, {"storage", storage}, {"n_trials", n + repeats}, {"search_space", space}}, "bench");
  {
    const auto writer = hpo::open_storage(storage, hpo::StorageAccess::ReadWrite);
    const int study = writer->get_or_create_study(spec.name, spec.directions());
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> uniform(-5.0, 5.0);
    for (int i = 0; i < n; ++i) {
      hpo::FrozenTrial t;
      t.state = hpo::TrialState::Complete;
      double value = 0.0;
      for (const auto& p : spec.search_space.params()) {
        t.params[p.name] = uniform(rng);
        t.distributions[p.name] = p.distribution;
        value += t.params[p.name] * t.params[p.name];
      }
      t.values = {value};
      writer->create_trial(study, &t);
    }
  }
  hpo::Study study(spec, hpo::make_sampler(spec));
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const hpo::AskedTrial asked = study.ask();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    study.tell(asked.number, hpo::TrialState::Fail);
  }
  std::sort(ms.begin(), ms.end());
  std::cout << nlohmann::json{{"engine", "bfhpo Study::ask"}, {"n_trials", n}, {"median_ms", ms[ms.size() / 2]},
                              {"p95_ms", ms[ms.size() * 95 / 100]}}.dump()
            << std::endl;
  if (is_file) std::filesystem::remove(storage);
}
