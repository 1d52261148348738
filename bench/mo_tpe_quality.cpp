// bfhpo's TPE on the multi-objective benchmark problems
// (bench/mo_test_functions.hpp): for each problem and seed, one study per
// budget (n_trials = 50, 100: a sampler that plans for its budget gets the
// one it is run with); prints one JSON line per (problem, seed) with every
// trial's values and the hypervolume at each budget against the problem's
// reference point. bench/compare_optuna_multi_objective.py runs Optuna on
// the same problems and prints the comparison.
//
//   bench_mo_tpe_quality [n_seeds] [sampler section as JSON] [first seed] [problem]
#include "bench/mo_test_functions.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/tpe/hypervolume.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace bfhpo;

namespace {

// The values of each trial of one study, in trial order.
std::vector<std::vector<double>> study_values(const bench::MultiObjectiveProblem& problem,
                                              const nlohmann::json& sampler_section, int seed, int n_trials) {
  nlohmann::json objectives = nlohmann::json::array();
  for (std::size_t i = 0; i < problem.reference.size(); ++i)
    objectives.push_back({{"metric", "f" + std::to_string(i + 1)}, {"direction", "minimize"}});
  hpo::StudySpec spec = hpo::parse_study_spec({{"name", problem.name}, {"seed", seed}, {"n_trials", n_trials},
                                               {"objectives", objectives}, {"sampler", sampler_section},
                                               {"search_space", problem.search_space}},
                                              "bench");
  auto sampler = hpo::make_sampler(spec);
  std::vector<hpo::FrozenTrial> trials;
  std::vector<std::vector<double>> values;
  for (int n = 0; n < n_trials; ++n) {
    // What a study with this seed asks: the study seed and the trial's number.
    hpo::SampleRequest request{spec.search_space, trials, spec.directions(), spec.seed, n, {}};
    hpo::FrozenTrial t;
    t.number = t.trial_id = n;
    t.params = sampler->sample(request).params;
    for (const auto& p : spec.search_space.params())
      if (t.params.count(p.name)) t.distributions[p.name] = p.distribution;
    t.values = problem.f(t.params);
    t.state = hpo::TrialState::Complete;
    values.push_back(t.values);
    trials.push_back(std::move(t));
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const int n_seeds = argc > 1 ? std::stoi(argv[1]) : 10;
  const nlohmann::json sampler = argc > 2 ? nlohmann::json::parse(argv[2]) : nlohmann::json{{"type", "tpe"}};
  const int first_seed = argc > 3 ? std::stoi(argv[3]) : 0;
  const std::string only = argc > 4 ? argv[4] : "";
  for (const auto& problem : bench::multi_objective_problems()) {
    if (!only.empty() && problem.name != only) continue;
    for (int seed = first_seed; seed < first_seed + n_seeds; ++seed) {
      nlohmann::json values = nlohmann::json::object(), hypervolume = nlohmann::json::object();
      for (int budget : {50, 100}) {
        const auto v = study_values(problem, sampler, seed, budget);
        values[std::to_string(budget)] = v;
        hypervolume[std::to_string(budget)] = hpo::tpe::hypervolume(v, problem.reference);
      }
      std::cout << nlohmann::json{{"problem", problem.name}, {"seed", seed}, {"values", values},
                                  {"hypervolume", hypervolume}}.dump()
                << std::endl;
    }
  }
}
