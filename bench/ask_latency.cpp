// Latency of one TPE proposal with 10 float params at 100, 1000 and 10,000
// finished trials (or the counts given after the repeats): prints the median
// and p95 wall time and the median CPU time of the asking thread, in
// milliseconds, as JSON lines.
//   bench_ask_latency [REPEATS=50] [N_TRIALS...]
// The asks run under the heap policy of `bfhpo optimize`, which asks in a
// loop (common/heap_policy.hpp); a one-shot `bfhpo ask` process pays its
// first-touch page faults whatever the policy (bench/cli_processes.py).
#include "common/heap_policy.hpp"
#include "hpo/sampler_factory.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <random>

using namespace bfhpo;

namespace {
// This thread's CPU time: what an ask costs on a machine other processes share.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
}  // namespace

int main(int argc, char** argv) {
  keep_freed_heap_for_reuse();
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 50;
  nlohmann::json space = nlohmann::json::object();
  for (int d = 0; d < 10; ++d) space["x" + std::to_string(d)] = {{"type", "float"}, {"low", -5.0}, {"high", 5.0}};
  hpo::StudySpec spec = hpo::parse_study_spec({{"name", "latency"}, {"search_space", space}}, "bench");
  auto sampler = hpo::make_sampler(spec);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-5.0, 5.0);
  std::vector<int> sizes;
  for (int a = 2; a < argc; ++a) sizes.push_back(std::stoi(argv[a]));
  if (sizes.empty()) sizes = {100, 1000, 10000};
  for (int n : sizes) {
    std::vector<hpo::FrozenTrial> trials(n);
    for (int i = 0; i < n; ++i) {
      auto& t = trials[i];
      t.number = t.trial_id = i;
      t.state = hpo::TrialState::Complete;
      double value = 0;
      for (const auto& p : spec.search_space.params()) {
        t.params[p.name] = uniform(rng);
        t.distributions[p.name] = p.distribution;
        value += t.params[p.name] * t.params[p.name];
      }
      t.values = {value};
    }
    std::vector<double> ms, cpu_ms;
    for (int r = 0; r < repeats; ++r) {
      const double cpu_start = thread_cpu_ms();
      auto start = std::chrono::steady_clock::now();
      hpo::SampleRequest request{spec.search_space, trials, spec.directions(), spec.seed, n + r, {}};
      volatile double sink = sampler->sample(request).params.begin()->second;
      (void)sink;
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      cpu_ms.push_back(thread_cpu_ms() - cpu_start);
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    std::cout << nlohmann::json{{"engine", "bfhpo"}, {"n_trials", n}, {"median_ms", ms[ms.size() / 2]},
                                {"p95_ms", ms[std::min(ms.size() - 1, ms.size() * 95 / 100)]},
                                {"cpu_median_ms", cpu_ms[cpu_ms.size() / 2]}}.dump()
              << std::endl;
  }
}
