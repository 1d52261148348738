#include "hpo/study.hpp"
#include "hpo/study_report.hpp"
#include "hpo/trial_attrs.hpp"

#include <catch2/catch.hpp>

#include <iostream>
#include <limits>
#include <sstream>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

// Captures what std::cerr receives while it lives.
struct CapturedStderr {
  std::ostringstream text;
  std::streambuf* old = std::cerr.rdbuf(text.rdbuf());
  ~CapturedStderr() { std::cerr.rdbuf(old); }
};

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

FrozenTrial trial(int number, TrialState state, std::optional<double> value = {}) {
  FrozenTrial t;
  t.number = number;
  t.trial_id = number;
  t.state = state;
  if (value) t.values = {*value};
  return t;
}

StudySpec spec() {
  return parse_study_spec(json::parse(R"({"name": "unit", "direction": "minimize", "n_trials": 9,
      "search_space": {"x": {"type": "float", "low": -3, "high": 3},
                       "k": {"type": "int", "low": 1, "high": 5}}})"),
                          "study.json");
}

}  // namespace

TEST_CASE("an attribute of another JSON type than bfhpo writes is ignored with one warning naming trial and key") {
  FrozenTrial copy = trial(4, TrialState::Waiting);
  copy.trial_id = 1004;  // an id no other test uses: the warning is once per process
  copy.system_attrs[kRequeuedFromAttr] = "3";
  copy.system_attrs["bfhpo:seconds"] = 2.5;
  CapturedStderr err;
  CHECK_FALSE(integer_attr(copy, kRequeuedFromAttr));
  CHECK_FALSE(integer_attr(copy, kRequeuedFromAttr));
  CHECK(number_attr(copy, "bfhpo:seconds") == 2.5);
  CHECK_FALSE(string_attr(copy, "bfhpo:absent"));
  const std::string text = err.text.str();
  CHECK(count(text, "warning: trial 4: system attribute bfhpo:requeued_from is \"3\"") == 1);
  CHECK(count(text, "warning") == 1);
}

TEST_CASE("count_finished and the status JSON read a string bfhpo:requeued_from without aborting") {
  std::vector<FrozenTrial> trials{trial(0, TrialState::Fail), trial(1, TrialState::Waiting),
                                  trial(2, TrialState::Complete, 1.0)};
  trials[0].trial_id = 2000;
  trials[1].trial_id = 2001;
  trials[2].trial_id = 2002;
  trials[1].system_attrs[kRequeuedFromAttr] = "0";
  CapturedStderr err;
  // The re-queue mark is unreadable: trial 0 counts as a finished FAIL.
  CHECK(count_finished(trials) == 2);
  CHECK(study_status_json(spec(), trials)["finished"] == 2);
  trials[1].system_attrs[kRequeuedFromAttr] = 0;
  CHECK(count_finished(trials) == 1);
}

TEST_CASE("infinite objective values keep their sign in the status JSON, the best and the CSV") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<FrozenTrial> trials{trial(0, TrialState::Complete, 2.0), trial(1, TrialState::Complete, -inf),
                                  trial(2, TrialState::Complete, inf)};
  const json status = study_status_json(spec(), trials);
  CHECK(status["trials"][0]["value"] == 2.0);
  CHECK(status["trials"][1]["value"] == "-Infinity");
  CHECK(status["trials"][2]["value"] == "Infinity");
  CHECK(status["best"]["number"] == 1);
  CHECK(status["best"]["value"] == "-Infinity");
  CHECK(best_trial_json(spec(), trials)["value"] == "-Infinity");
  std::istringstream csv(trials_csv(spec(), trials));
  std::string header, row0, row1, row2;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  std::getline(csv, row2);
  CHECK(row0.rfind("0,COMPLETE,2.0,", 0) == 0);
  CHECK(row1.rfind("1,COMPLETE,-inf,", 0) == 0);
  CHECK(row2.rfind("2,COMPLETE,inf,", 0) == 0);
}

TEST_CASE("the status of a WAITING trial that Optuna's enqueue_trial fixed in part shows the fixed params") {
  std::vector<FrozenTrial> trials{trial(0, TrialState::Waiting)};
  trials[0].system_attrs["fixed_params"] = {{"x", 0.5}};
  const json status = study_status_json(spec(), trials);
  CHECK(status["trials"][0]["params"] == json{{"x", 0.5}});
}
