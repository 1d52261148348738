// Trials that Optuna's study.enqueue_trial(params) queued: a WAITING trial
// whose system attribute "fixed_params" holds external values, possibly only
// some. The Study serves them through the search space and samples the rest.
#include "hpo/fixed_params.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/storage/journal_storage.hpp"
#include "hpo/study.hpp"
#include "scratch_folder.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

struct ScratchStudy : ScratchFolder {
  explicit ScratchStudy(const std::string& tag) : ScratchFolder("enqueued_test", tag) {}

  StudySpec spec(const std::string& sampler = "tpe", std::uint64_t seed = 3) const {
    json document = json::parse(R"({
      "name": "unit", "direction": "minimize", "n_trials": 50,
      "search_space": {
        "x":    {"type": "float", "low": -3, "high": 3},
        "lr":   {"type": "float", "low": 1e-4, "high": 1e-1, "log": true},
        "kind": {"type": "categorical", "choices": ["a", "b", 7]},
        "k":    {"type": "int", "low": 1, "high": 9, "step": 2, "when": {"kind": "b"}}}})");
    document["seed"] = seed;
    document["sampler"] = {{"type", sampler}};
    return parse_study_spec(document, dir / "study.json");
  }
};

// What Optuna's enqueue_trial writes: a WAITING trial with only the attribute.
int optuna_enqueue(Study& study, const json& fixed_params) {
  FrozenTrial waiting;
  waiting.state = TrialState::Waiting;
  waiting.system_attrs[kFixedParamsAttr] = fixed_params;
  return study.storage().trial(study.storage().create_trial(study.study_id(), &waiting)).number;
}

double objective(const Params& p) { return p.at("x") * p.at("x") + std::log10(p.at("lr")) + (p.count("k") ? p.at("k") : 0); }

void run_trials(Study& study, int n) {
  for (int i = 0; i < n; ++i) {
    const AskedTrial t = study.ask();
    study.tell(t.number, TrialState::Complete, objective(t.params));
  }
}

}  // namespace

TEST_CASE("full fixed_params are served as internal values and recorded, a re-read finds the same") {
  ScratchStudy scratch("full");
  const StudySpec spec = scratch.spec();
  Study study(spec, make_sampler(spec));
  const int number = optuna_enqueue(study, {{"x", 1.25}, {"lr", 0.003}, {"kind", "b"}, {"k", 7}});
  const AskedTrial asked = study.ask();
  CHECK(asked.from_queue);
  CHECK(asked.number == number);
  const Params expected{{"x", 1.25}, {"lr", 0.003}, {"kind", 1.0}, {"k", 7.0}};
  CHECK(asked.params == expected);
  CHECK(spec.search_space.to_external(asked.params) == json({{"x", 1.25}, {"lr", 0.003}, {"kind", "b"}, {"k", 7}}));
  JournalStorage reread(spec.storage);
  const FrozenTrial& recorded = reread.trials_of(0).at(number);
  CHECK(recorded.state == TrialState::Running);
  CHECK(recorded.params == expected);
  CHECK(recorded.distributions.at("kind") == spec.search_space.find("kind")->distribution);
  CHECK(recorded.distributions.at("lr") == spec.search_space.find("lr")->distribution);
}

TEST_CASE("partial fixed_params keep their values and the sampler fills the rest, before and after startup") {
  ScratchStudy scratch("partial");
  const StudySpec spec = scratch.spec();
  Study study(spec, make_sampler(spec));
  const std::vector<json> partials = {{{"kind", "b"}}, {{"x", -2.5}}, {{"kind", 7}, {"lr", 0.05}}, json::object()};
  for (int round = 0; round < 2; ++round) {  // round 0: random startup, round 1: TPE (12 trials done)
    if (round == 1) run_trials(study, 12);
    for (const json& partial : partials) {
      const int number = optuna_enqueue(study, partial);
      const AskedTrial asked = study.ask();
      REQUIRE(asked.number == number);
      CHECK(spec.search_space.is_valid_assignment(asked.params));
      const json external = spec.search_space.to_external(asked.params);
      for (const auto& [name, value] : partial.items()) CHECK(external.at(name) == value);
      CHECK(JournalStorage(spec.storage).trials_of(0).at(number).params == asked.params);
      study.tell(asked.number, TrialState::Complete, objective(asked.params));
    }
  }
}

TEST_CASE("a fixed parent activates a child the sampler's proposal lacks: the child is drawn in its range") {
  ScratchStudy scratch("conditional");
  const StudySpec spec = scratch.spec("random");
  Study study(spec, make_sampler(spec));
  int children = 0;
  for (int i = 0; i < 20; ++i) {  // the random proposal has kind "a" or 7, without k, about 2 times in 3
    optuna_enqueue(study, {{"kind", "b"}});
    const AskedTrial asked = study.ask();
    REQUIRE(asked.params.count("k"));
    CHECK(contains(spec.search_space.find("k")->distribution, asked.params.at("k")));
    children += asked.proposal.params.count("k") == 0;
    study.tell(asked.number, TrialState::Complete, objective(asked.params));
  }
  CHECK(children > 0);  // the path was taken
}

TEST_CASE("the feasibility predicate judges candidates with the fixed values in place") {
  ScratchStudy scratch("feasible");
  const StudySpec spec = scratch.spec("random");
  Study study(spec, make_sampler(spec));
  optuna_enqueue(study, {{"x", 2.75}, {"kind", "a"}});
  int judged = 0, with_fixed = 0;
  const AskedTrial asked = study.ask([&](const Params& p) {
    ++judged;
    with_fixed += p.at("x") == 2.75 && p.at("kind") == 0.0 && !p.count("k");
    return p.at("lr") < 1e-3;
  });
  CHECK(judged > 0);
  CHECK(with_fixed == judged);
  CHECK(asked.params.at("lr") < 1e-3);
}

TEST_CASE("out-of-range numbers run as given, a non-integer int as int(v), unknown names are ignored") {
  ScratchStudy scratch("out_of_range");
  const StudySpec spec = scratch.spec();
  Study study(spec, make_sampler(spec));
  optuna_enqueue(study, {{"x", 9.5}, {"lr", 0.5}, {"kind", "b"}, {"k", 4.5}, {"nope", 1}});
  const AskedTrial asked = study.ask();
  CHECK(asked.params == Params{{"x", 9.5}, {"lr", 0.5}, {"kind", 1.0}, {"k", 4.0}});
  study.tell(asked.number, TrialState::Complete, 1.0);
  run_trials(study, 14);  // the TPE then models a study with a value outside the range
  for (const auto& t : study.trials())
    if (t.number > 0) CHECK(spec.search_space.is_valid_assignment(t.params));
}

TEST_CASE("fixed params that cannot run make their trial FAIL with the reason; ask serves the next one") {
  ScratchStudy scratch("unusable");
  const StudySpec spec = scratch.spec();
  Study study(spec, make_sampler(spec));
  const std::vector<json> unusable = {{{"kind", "zzz"}}, {{"x", "oops"}}, {{"lr", nullptr}}, json::array({1, 2})};
  for (const json& fixed : unusable) optuna_enqueue(study, fixed);
  const int good = optuna_enqueue(study, {{"x", 0.5}});
  const AskedTrial asked = study.ask();
  CHECK(asked.number == good);
  CHECK(asked.params.at("x") == 0.5);
  const auto trials = study.trials();
  for (int n = 0; n < static_cast<int>(unusable.size()); ++n) {
    CHECK(trials[n].state == TrialState::Fail);
    CHECK(trials[n].params.empty());
    CHECK(trials[n].system_attrs.at(kFailReasonAttr).get<std::string>().find("enqueued params cannot run") !=
          std::string::npos);
  }
  CHECK(count_finished(trials) == 4);
}

TEST_CASE("ask_if_room serves fixed_params only while there is room; a FAIL of unusable ones counts") {
  ScratchStudy scratch("room");
  StudySpec spec = scratch.spec();
  spec.n_trials = 2;
  Study study(spec, make_sampler(spec));
  optuna_enqueue(study, {{"kind", "zzz"}});
  optuna_enqueue(study, {{"x", 1.0}});
  optuna_enqueue(study, {{"x", 2.0}});
  const auto first = study.ask_if_room();
  REQUIRE(first);
  CHECK(first->params.at("x") == 1.0);  // the unusable one became FAIL first, one finished
  CHECK_FALSE(study.ask_if_room());     // 1 FAIL + 1 RUNNING == n_trials
}

TEST_CASE("read_fixed_params maps each kind through its distribution") {
  const SearchSpace space = ScratchStudy("read").spec().search_space;
  const FixedParams read = read_fixed_params({{"kind", 7}, {"k", 3}, {"lr", 1e-3}}, space);
  CHECK(read.unusable.empty());
  CHECK(read.warnings.empty());
  CHECK(read.params == Params{{"kind", 2.0}, {"k", 3.0}, {"lr", 1e-3}});
  CHECK(read_fixed_params({{"k", 4}}, space).warnings.size() == 1);  // off the step grid
  CHECK_FALSE(read_fixed_params({{"x", std::nan("")}}, space).unusable.empty());
  CHECK_FALSE(read_fixed_params({{"kind", "7"}}, space).unusable.empty());  // "7" is not the choice 7
}
