// bfhpo's TPE on the six test functions in 5-D: prints one JSON line per
// (function, seed) with the best value after 25, 50 and 100 trials.
// bench/compare_optuna.py runs Optuna the same way and prints the comparison.
#include "bench/test_functions.hpp"
#include "hpo/sampler_factory.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <limits>

using namespace bfhpo;

int main(int argc, char** argv) {
  const int dims = 5, n_trials = 100, n_seeds = argc > 1 ? std::stoi(argv[1]) : 10;
  // Optional: the sampler section as JSON, e.g. '{"type": "tpe", "multivariate": false}'.
  const nlohmann::json sampler = argc > 2 ? nlohmann::json::parse(argv[2]) : nlohmann::json{{"type", "tpe"}};
  for (const auto& fn : bench::test_functions()) {
    nlohmann::json space = nlohmann::json::object();
    for (int d = 0; d < dims; ++d) space["x" + std::to_string(d)] = {{"type", "float"}, {"low", fn.low}, {"high", fn.high}};
    for (int seed = 0; seed < n_seeds; ++seed) {
      hpo::StudySpec spec = hpo::parse_study_spec(
          {{"name", fn.name}, {"seed", seed}, {"n_trials", n_trials}, {"sampler", sampler}, {"search_space", space}}, "bench");
      auto sampler = hpo::make_sampler(spec);
      std::vector<hpo::FrozenTrial> trials;
      double best = std::numeric_limits<double>::infinity();
      nlohmann::json checkpoints = nlohmann::json::object();
      for (int n = 0; n < n_trials; ++n) {
        // What a study with this seed asks: the study seed and the trial's number.
        hpo::SampleRequest request{spec.search_space, trials, spec.direction, spec.seed, n, {}};
        hpo::FrozenTrial t;
        t.number = t.trial_id = n;
        t.params = sampler->sample(request).params;
        std::vector<double> x;
        for (int d = 0; d < dims; ++d) x.push_back(t.params.at("x" + std::to_string(d)));
        t.value = fn.f(x);
        t.state = hpo::TrialState::Complete;
        for (const auto& p : spec.search_space.params()) t.distributions[p.name] = p.distribution;
        best = std::min(best, *t.value);
        trials.push_back(std::move(t));
        if (n + 1 == 25 || n + 1 == 50 || n + 1 == 100) checkpoints[std::to_string(n + 1)] = best;
      }
      std::cout << nlohmann::json{{"function", fn.name}, {"seed", seed}, {"best", checkpoints}}.dump() << std::endl;
    }
  }
}
