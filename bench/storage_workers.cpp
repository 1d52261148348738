// W workers (threads, each its own Study and storage connection, as W
// processes would be) x K ask/tell on one study: ask_if_room, tell COMPLETE
// with a value only that ask can produce. Prints wall time, trials/s, and
// what the storage holds afterwards: finished trials, distinct numbers, told
// values missing (lost), trials beyond W x K (overshoot). One JSON line.
//   bench_storage_workers STORAGE [WORKERS=8] [TRIALS_EACH=50]
// STORAGE: a journal path (created fresh) or a postgresql:// URL of an empty database.
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace bfhpo;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_storage_workers STORAGE [WORKERS] [TRIALS_EACH]\n";
    return 2;
  }
  const std::string storage = argv[1];
  const int workers = argc > 2 ? std::stoi(argv[2]) : 8, each = argc > 3 ? std::stoi(argv[3]) : 50;
  if (storage.find("://") == std::string::npos) std::filesystem::remove(storage);
  nlohmann::json space = nlohmann::json::object();
  for (int d = 0; d < 4; ++d) space["x" + std::to_string(d)] = {{"type", "float"}, {"low", -5.0}, {"high", 5.0}};
  const hpo::StudySpec spec = hpo::parse_study_spec(
      {{"name", "workers"}, {"storage", storage}, {"n_trials", workers * each}, {"search_space", space},
       {"sampler", {{"type", "random"}}}},
      "bench");
  hpo::Study(spec, hpo::make_sampler(spec));  // creates the study once, before the clock starts

  std::mutex told_mutex;
  std::map<int, double> told;  // number -> value, as each worker told it
  std::atomic<int> errors{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      try {
        hpo::Study study(spec, hpo::make_sampler(spec));
        while (auto asked = study.ask_if_room()) {
          const double value = asked->number + 0.001 * w;
          study.tell(asked->number, hpo::TrialState::Complete, value);
          std::lock_guard<std::mutex> lock(told_mutex);
          told[asked->number] = value;
        }
      } catch (const std::exception& e) {
        std::cerr << "worker " << w << ": " << e.what() << "\n";
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  hpo::Study reader(spec, nullptr, hpo::Study::Open::ReadOnly);
  const std::vector<hpo::FrozenTrial> trials = reader.trials();
  std::set<int> numbers;
  int lost = 0;
  for (const auto& t : trials) numbers.insert(t.number);
  for (const auto& [number, value] : told) {
    const auto found = std::find_if(trials.begin(), trials.end(), [&](const auto& t) { return t.number == number; });
    lost += found == trials.end() || found->state != hpo::TrialState::Complete || found->values != std::vector<double>{value};
  }
  std::cout << nlohmann::json{{"storage", storage.find("://") == std::string::npos ? "journal" : "postgresql"},
                              {"workers", workers},
                              {"asks_each", each},
                              {"seconds", seconds},
                              {"trials_per_s", told.size() / seconds},
                              {"told", told.size()},
                              {"stored", trials.size()},
                              {"finished", hpo::count_finished(trials)},
                              {"distinct_numbers", numbers.size()},
                              {"lost", lost},
                              {"overshoot", static_cast<int>(trials.size()) - workers * each},
                              {"worker_errors", errors.load()}}
                   .dump()
            << std::endl;
  return lost == 0 && errors == 0 && static_cast<int>(told.size()) == workers * each ? 0 : 1;
}
