// bfhpo's TPE on the benchmark problems (bench/test_functions.hpp): for each
// problem and seed, one study per budget (n_trials = 25, 50, 100, so a sampler
// that plans for its budget gets the one it is run with); prints one JSON line
// per (problem, seed) with the best value of each. bench/compare_optuna.py
// runs Optuna on the same problems and prints the comparison.
//
//   bench_tpe_quality [n_seeds] [sampler section as JSON] [first seed] [problem] [workers]
//
// workers (default 1): how many trials run at once (see best_of_study).
#include "bench/test_functions.hpp"
#include "hpo/sampler_factory.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <limits>

using namespace bfhpo;

namespace {

// `workers` asks run at once: each trial is asked while the previous
// workers - 1 are still RUNNING (their params known, their values not), and
// told, oldest first, when a worker needs a new one.
double best_of_study(const bench::TestProblem& problem, const nlohmann::json& sampler_section, int seed, int n_trials,
                     int workers) {
  hpo::StudySpec spec = hpo::parse_study_spec({{"name", problem.name}, {"seed", seed}, {"n_trials", n_trials},
                                               {"sampler", sampler_section}, {"search_space", problem.search_space}},
                                              "bench");
  auto sampler = hpo::make_sampler(spec);
  std::vector<hpo::FrozenTrial> trials;
  double best = std::numeric_limits<double>::infinity();
  std::size_t oldest_running = 0;
  const auto tell_oldest = [&] {
    hpo::FrozenTrial& t = trials[oldest_running++];
    t.values = {problem.f(t.params)};
    t.state = hpo::TrialState::Complete;
    best = std::min(best, t.values.front());
  };
  for (int n = 0; n < n_trials; ++n) {
    if (trials.size() - oldest_running == static_cast<std::size_t>(workers)) tell_oldest();
    // What a study with this seed asks: the study seed and the trial's number.
    hpo::SampleRequest request{spec.search_space, trials, spec.directions(), spec.seed, n, {}};
    hpo::FrozenTrial t;
    t.number = t.trial_id = n;
    t.params = sampler->sample(request).params;
    t.state = hpo::TrialState::Running;
    for (const auto& p : spec.search_space.params())
      if (t.params.count(p.name)) t.distributions[p.name] = p.distribution;
    trials.push_back(std::move(t));
  }
  while (oldest_running < trials.size()) tell_oldest();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int n_seeds = argc > 1 ? std::stoi(argv[1]) : 10;
  const nlohmann::json sampler = argc > 2 ? nlohmann::json::parse(argv[2]) : nlohmann::json{{"type", "tpe"}};
  const int first_seed = argc > 3 ? std::stoi(argv[3]) : 0;
  const std::string only = argc > 4 ? argv[4] : "";
  const int workers = argc > 5 ? std::stoi(argv[5]) : 1;
  for (const auto& problem : bench::test_problems()) {
    if (!only.empty() && problem.name != only) continue;
    for (int seed = first_seed; seed < first_seed + n_seeds; ++seed) {
      nlohmann::json best = nlohmann::json::object();
      for (int budget : {25, 50, 100}) best[std::to_string(budget)] = best_of_study(problem, sampler, seed, budget, workers);
      std::cout << nlohmann::json{{"function", problem.name}, {"seed", seed}, {"best", best}}.dump() << std::endl;
    }
  }
}
