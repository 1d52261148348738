#include "common/user_error.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/study.hpp"
#include "hpo/study_objectives.hpp"
#include "scratch_folder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

FrozenTrial complete(int number, std::vector<double> values, std::optional<double> constraint = std::nullopt) {
  FrozenTrial t;
  t.number = t.trial_id = number;
  t.state = TrialState::Complete;
  t.values = std::move(values);
  if (constraint) t.system_attrs[kConstraintsAttr] = {*constraint};
  return t;
}

// Random trials on a coarse grid (so that equal values occur), some not COMPLETE, some infeasible.
std::vector<FrozenTrial> random_trials(std::mt19937_64& rng, int n, int objectives, bool constrained) {
  std::uniform_int_distribution<int> cell(0, 6);
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < n; ++i) {
    std::vector<double> values;
    for (int k = 0; k < objectives; ++k) values.push_back(cell(rng) * 0.5);
    FrozenTrial t = complete(i, values, constrained ? std::optional<double>(cell(rng) - 4.0) : std::nullopt);
    if (i % 7 == 3) t.state = TrialState::Pruned;
    if (i % 11 == 5) {
      t.state = TrialState::Running;
      t.values.clear();
    }
    trials.push_back(t);
  }
  return trials;
}

}  // namespace

TEST_CASE("pareto_front: no member is dominated, every other candidate is, ties are kept, as Optuna's best_trials") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    const int objectives = 2 + round % 3;
    const bool constrained = round % 2 == 1;
    Directions directions;
    for (int k = 0; k < objectives; ++k)
      directions.push_back((round + k) % 3 == 0 ? StudyDirection::Maximize : StudyDirection::Minimize);
    const auto trials = random_trials(rng, 40, objectives, constrained);
    const auto front = pareto_front(trials, directions);
    std::set<int> on_front;
    for (const auto& t : front) on_front.insert(t.number);
    REQUIRE(!front.empty());
    for (const auto& t : trials) {
      const bool candidate = t.state == TrialState::Complete && (!constrained || is_feasible(t));
      const auto loss = loss_values(t, directions);
      bool dominated = false;
      for (const auto& other : trials)
        if (candidate && other.state == TrialState::Complete && (!constrained || is_feasible(other)) &&
            dominates(loss_values(other, directions), loss))
          dominated = true;
      INFO("round " << round << " trial " << t.number);
      CHECK(on_front.count(t.number) == (candidate && !dominated ? 1u : 0u));
    }
    CHECK(std::is_sorted(front.begin(), front.end(),
                         [](const FrozenTrial& a, const FrozenTrial& b) { return a.number < b.number; }));
  }
}

TEST_CASE("dominates and loss_values: a maximized objective is negated, equal points do not dominate") {
  const FrozenTrial a = complete(0, {1.0, 5.0}), b = complete(1, {2.0, 4.0});
  const Directions mixed = {StudyDirection::Minimize, StudyDirection::Maximize};
  CHECK(loss_values(a, mixed) == std::vector<double>{1.0, -5.0});
  CHECK(dominates(loss_values(a, mixed), loss_values(b, mixed)));
  CHECK_FALSE(dominates(loss_values(b, mixed), loss_values(a, mixed)));
  CHECK_FALSE(dominates(loss_values(a, mixed), loss_values(a, mixed)));
  const Directions both_min = {StudyDirection::Minimize, StudyDirection::Minimize};
  CHECK_FALSE(dominates(loss_values(a, both_min), loss_values(b, both_min)));
  CHECK(loss_values(complete(2, {1.0}), both_min).empty());  // a count that differs from the directions'
}

TEST_CASE("non_domination_ranks: rank r points are dominated only by lower ranks, and by one of rank r - 1") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> cell(0, 9);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::vector<double>> points(30, std::vector<double>(2 + round % 2));
    for (auto& p : points)
      for (auto& v : p) v = cell(rng);
    const auto ranks = non_domination_ranks(points);
    for (std::size_t i = 0; i < points.size(); ++i) {
      bool dominated_by_previous = ranks[i] == 0;
      for (std::size_t j = 0; j < points.size(); ++j) {
        if (!dominates(points[j], points[i])) continue;
        CHECK(ranks[j] < ranks[i]);
        dominated_by_previous = dominated_by_previous || ranks[j] == ranks[i] - 1;
      }
      CHECK(dominated_by_previous);
    }
  }
}

TEST_CASE("constraint values: Optuna 3's list and Optuna 5's constraints:<key> attributes, NaN infeasible") {
  FrozenTrial t = complete(0, {1.0}, -0.5);
  CHECK(is_feasible(t));
  t.system_attrs["constraints:memory"] = 0.25;
  CHECK(constraint_values(t) == std::vector<double>{-0.5, 0.25});
  CHECK_FALSE(is_feasible(t));
  CHECK(is_feasible(complete(1, {1.0})));
  FrozenTrial unknown = complete(2, {1.0});
  unknown.system_attrs[kConstraintsAttr] = {nullptr};  // Optuna writes NaN; JSON may hold null
  CHECK_FALSE(is_feasible(unknown));
}

TEST_CASE("study files: objectives and constraints are read with their directions and bounds") {
  const json document = json::parse(R"({"name": "mo",
    "objectives": [{"metric": "val_nll", "direction": "minimize"}, {"metric": "recovery_r", "direction": "maximize"}],
    "constraints": ["val_nll <= 0.02", " recovery_r>=1e1 "]})");
  const StudySpec spec = parse_study_spec(document, "mo.json");
  REQUIRE(spec.objectives.size() == 2);
  CHECK(spec.multi_objective());
  CHECK(spec.directions() == Directions{StudyDirection::Minimize, StudyDirection::Maximize});
  CHECK(spec.objectives[1].metric == "recovery_r");
  REQUIRE(spec.constraints.size() == 2);
  CHECK(spec.constraints[0].value(0.03) == Approx(0.01));
  CHECK(spec.constraints[0].value(0.01) < 0);
  CHECK(spec.constraints[1].value(25.0) == Approx(-15.0));  // >= 10: met by 15
  CHECK(spec.constraints[1].text() == "recovery_r >= 10");
  const StudySpec single = parse_study_spec(json::parse(R"({"name": "s", "direction": "maximize"})"), "s.json");
  CHECK(single.directions() == Directions{StudyDirection::Maximize});
  CHECK_FALSE(single.multi_objective());
}

TEST_CASE("tell in a study of several objectives: one value each, constraints from the values, nothing written on refusal") {
  ScratchFolder scratch("pareto_front_test", "tell");
  const json document = json::parse(R"({"name": "mo", "n_trials": 10,
    "objectives": [{"metric": "f1", "direction": "minimize"}, {"metric": "f2", "direction": "maximize"}],
    "constraints": ["f2 >= 0.5"],
    "search_space": {"x": {"type": "float", "low": 0, "high": 1}}})");
  const StudySpec spec = parse_study_spec(document, scratch.dir / "mo.json");
  Study study(spec, make_sampler(spec));
  CHECK(study.system_attrs()["study:metric_names"] == json({"f1", "f2"}));
  const AskedTrial first = study.ask();
  CHECK_THROWS_AS(study.tell(first.number, TrialState::Complete, std::vector<double>{1.0}), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(first.number, TrialState::Complete, 1.0), bfhpo::UserError);
  CHECK_THROWS_AS(study.report(first.number, 0, 1.0), bfhpo::UserError);
  CHECK(study.trial(first.number).state == TrialState::Running);
  CHECK(study.trial(first.number).intermediate_values.empty());
  study.tell(first.number, TrialState::Complete, std::vector<double>{1.0, 0.25});
  CHECK(study.trial(first.number).values == std::vector<double>{1.0, 0.25});
  CHECK(constraint_values(study.trial(first.number)) == std::vector<double>{0.25});  // 0.5 - 0.25: infeasible
  const AskedTrial second = study.ask();
  study.tell(second.number, TrialState::Complete, std::vector<double>{2.0, 0.75}, "", std::vector<double>{-1.0});
  CHECK(constraint_values(study.trial(second.number)) == std::vector<double>{-1.0});  // given ones win
  const auto front = study.best_trials();
  REQUIRE(front.size() == 1);
  CHECK(front[0].number == second.number);  // the first dominates it but is infeasible
  CHECK_THROWS_AS(study.best_trial(), std::logic_error);
}

TEST_CASE("constraint values told in a study that states none: COMPLETE and PRUNED only, as many on every trial") {
  ScratchFolder scratch("pareto_front_test", "told_constraints");
  const json document = json::parse(R"({"name": "own", "n_trials": 10,
    "search_space": {"x": {"type": "float", "low": 0, "high": 1}}})");
  const StudySpec spec = parse_study_spec(document, scratch.dir / "own.json");
  Study study(spec, make_sampler(spec));
  const AskedTrial first = study.ask();
  study.tell(first.number, TrialState::Complete, std::vector<double>{1.0}, "", std::vector<double>{-1.0, 2.0});
  const AskedTrial second = study.ask();
  CHECK_THROWS_AS(study.tell(second.number, TrialState::Complete, std::vector<double>{1.0}, "", std::vector<double>{-1.0}),
                  bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(second.number, TrialState::Fail, std::vector<double>{}, "", std::vector<double>{1.0, 1.0}),
                  bfhpo::UserError);
  CHECK(study.trial(second.number).state == TrialState::Running);
  CHECK(study.trial(second.number).system_attrs.count(kConstraintsAttr) == 0);
  study.tell(second.number, TrialState::Pruned, std::vector<double>{}, "", std::vector<double>{0.5, -0.5});
  CHECK(constraint_values(study.trial(second.number)) == std::vector<double>{0.5, -0.5});
}
