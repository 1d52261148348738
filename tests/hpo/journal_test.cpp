#include "common/user_error.hpp"
#include "hpo/storage/journal_storage.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include <unistd.h>

using namespace bfhpo::hpo;

namespace {

struct ScratchJournal {
  std::filesystem::path path;
  explicit ScratchJournal(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("bfhpo_journal_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove(path);
  }
  ~ScratchJournal() { std::filesystem::remove(path); }
  std::string text() const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void append_raw(const std::string& bytes) const { std::ofstream(path, std::ios::app) << bytes; }
};

const Distribution kX = FloatDistribution{-1.0, 1.0, false, std::nullopt};

void check_same(const std::vector<FrozenTrial>& a, const std::vector<FrozenTrial>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].number == b[i].number);
    CHECK(a[i].state == b[i].state);
    CHECK(a[i].params == b[i].params);
    CHECK(a[i].intermediate_values.size() == b[i].intermediate_values.size());
    CHECK(a[i].user_attrs == b[i].user_attrs);
    CHECK(a[i].system_attrs == b[i].system_attrs);
    CHECK((a[i].value().has_value() == b[i].value().has_value()));
    if (a[i].value() && b[i].value() && !std::isnan(*a[i].value())) CHECK(*a[i].value() == *b[i].value());
  }
}

}  // namespace

TEST_CASE("replaying a journal gives the writer's in-memory state, for random sequences of operations") {
  for (unsigned seed = 0; seed < 5; ++seed) {
    ScratchJournal scratch("replay" + std::to_string(seed));
    JournalStorage writer(scratch.path);
    int study = writer.get_or_create_study("s", {StudyDirection::Minimize});
    std::mt19937 rng(seed);
    std::vector<int> open;
    for (int op = 0; op < 200; ++op) {
      int kind = static_cast<int>(rng() % 6);
      if (open.empty() || kind == 0) {
        open.push_back(writer.create_trial(study));
        continue;
      }
      int id = open[rng() % open.size()];
      double v = std::uniform_real_distribution<double>(-1, 1)(rng);
      if (kind == 1) {
        const std::string name = "x" + std::to_string(rng() % 3);
        writer.set_trial_params(id, {{name, v}}, {{name, kX}});
      }
      if (kind == 2) writer.set_trial_intermediate_value(id, static_cast<int>(rng() % 10), rng() % 7 ? v : NAN);
      if (kind == 3) writer.set_trial_user_attr(id, "u", v);
      if (kind == 4) writer.set_trial_system_attr(id, "s", {{"nested", v}});
      if (kind == 5) {
        TrialState state = rng() % 2 ? TrialState::Complete : TrialState::Pruned;
        CHECK(writer.set_trial_state_values(id, state, {rng() % 5 ? v : INFINITY}));
        open.erase(std::find(open.begin(), open.end(), id));
      }
    }
    JournalStorage reader(scratch.path);
    check_same(writer.trials(study), reader.trials(study));
  }
}

TEST_CASE("two journals on one file see each other's trials, ids follow log order") {
  ScratchJournal scratch("shared");
  JournalStorage a(scratch.path), b(scratch.path);
  int study = a.get_or_create_study("s", {StudyDirection::Maximize});
  CHECK(b.get_or_create_study("s", {StudyDirection::Maximize}) == study);
  int t0 = a.create_trial(study);
  int t1 = b.create_trial(study);
  int t2 = a.create_trial(study);
  CHECK(t0 == 0);
  CHECK(t1 == 1);
  CHECK(t2 == 2);
  b.set_trial_state_values(t0, TrialState::Complete, {3.0});
  a.sync();
  CHECK(a.trial(t0).state == TrialState::Complete);
  CHECK(a.trial(t0).value() == 3.0);
  CHECK(a.trials(study).size() == 3);
  CHECK_THROWS_AS(b.get_or_create_study("s", {StudyDirection::Minimize}), bfhpo::UserError);
}

TEST_CASE("trials_of gives each study's trials in number order when their lines interleave") {
  ScratchJournal scratch("two_studies");
  JournalStorage j(scratch.path);
  const int a = j.get_or_create_study("a", {StudyDirection::Minimize});
  const int b = j.get_or_create_study("b", {StudyDirection::Maximize});
  const int a0 = j.create_trial(a), b0 = j.create_trial(b), a1 = j.create_trial(a);
  j.set_trial_params(a1, {{"x", 0.25}}, {{"x", kX}});
  j.set_trial_state_values(b0, TrialState::Complete, {2.0});
  JournalStorage reader(scratch.path);
  for (const JournalStorage* view : {&j, &reader}) {
    const std::vector<FrozenTrial>& in_a = view->trials_of(a);
    REQUIRE(in_a.size() == 2);
    CHECK(in_a[0].trial_id == a0);
    CHECK(in_a[1].trial_id == a1);
    CHECK(in_a[1].number == 1);
    CHECK(in_a[1].params.at("x") == 0.25);
    REQUIRE(view->trials_of(b).size() == 1);
    CHECK(view->trials_of(b)[0].trial_id == b0);
    CHECK(view->trials_of(b)[0].value() == 2.0);
    CHECK(&view->trial(a1) == &in_a[1]);
  }
  CHECK_THROWS_AS(j.trials_of(2), std::out_of_range);
}

TEST_CASE("a WAITING trial is claimed once and a finished trial never changes") {
  ScratchJournal scratch("claim");
  JournalStorage a(scratch.path), b(scratch.path);
  int study = a.get_or_create_study("s", {StudyDirection::Minimize});
  FrozenTrial waiting;
  waiting.state = TrialState::Waiting;
  waiting.params = {{"x", 0.5}};
  waiting.distributions = {{"x", kX}};
  int id = a.create_trial(study, &waiting);
  b.sync();
  CHECK(a.set_trial_state_values(id, TrialState::Running));
  CHECK_FALSE(b.set_trial_state_values(id, TrialState::Running));  // b's view was stale: it lost
  CHECK(b.trial(id).params.at("x") == 0.5);
  CHECK(a.set_trial_state_values(id, TrialState::Complete, {1.0}));
  CHECK_FALSE(b.set_trial_state_values(id, TrialState::Fail));
  CHECK(JournalStorage(scratch.path).trial(id).state == TrialState::Complete);
}

TEST_CASE("an incomplete last line is ignored by readers and repaired by the next writer") {
  ScratchJournal scratch("torn");
  {
    JournalStorage j(scratch.path);
    int study = j.get_or_create_study("s", {StudyDirection::Minimize});
    j.set_trial_state_values(j.create_trial(study), TrialState::Complete, {1.0});
  }
  const std::string intact = scratch.text();
  scratch.append_raw(R"({"op_code": 4, "worker_id": "crashed", "study_id": 0, "datet)");
  JournalStorage reader(scratch.path);
  CHECK(reader.trials(0).size() == 1);
  int next = reader.create_trial(0);
  CHECK(next == 1);
  const std::string repaired = scratch.text();
  CHECK(repaired.compare(0, intact.size(), intact) == 0);
  CHECK(repaired.find("crashed") == std::string::npos);
  CHECK(JournalStorage(scratch.path).trials(0).size() == 2);
}

TEST_CASE("a corrupt line in the middle is an error naming the file and the line") {
  ScratchJournal scratch("corrupt");
  {
    JournalStorage j(scratch.path);
    j.get_or_create_study("s", {StudyDirection::Minimize});
  }
  scratch.append_raw("{not json\n");
  scratch.append_raw(R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": null})" "\n");
  CHECK_THROWS_WITH(JournalStorage(scratch.path), Catch::Contains(scratch.path.string()) && Catch::Contains("line 2"));
  ScratchJournal unknown("unknown_op");
  unknown.append_raw(R"({"op_code": 42, "worker_id": "w"})" "\n");
  CHECK_THROWS_WITH(JournalStorage(unknown.path), Catch::Contains("line 1") && Catch::Contains("op_code"));
}

TEST_CASE("a trial state Optuna does not define is an error naming the line, on either replay path") {
  const std::string create = R"({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]})" "\n";
  for (const std::string& line :
       {std::string(R"({"op_code": 4, "worker_id": "w", "study_id": 0, "state": 7, "datetime_start": null})"),
        std::string(R"({"op_code": 4, "worker_id": "w", "study_id": 0, "state": -1, "params": {}})"),
        std::string(R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 7, "values": null})"),
        std::string(R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 5, "values": [1.0], "x": {}})")}) {
    ScratchJournal scratch("bad_state");
    const bool sets_state = line.find("\"op_code\": 6") != std::string::npos;
    scratch.append_raw(create);
    if (sets_state) scratch.append_raw(R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": null})" "\n");
    scratch.append_raw(line + "\n");
    const std::string expected_line = sets_state ? "line 3" : "line 2";
    CHECK_THROWS_WITH(JournalStorage(scratch.path), Catch::Contains(expected_line) && Catch::Contains("is not one of Optuna's"));
  }
}

TEST_CASE("Python's NaN and Infinity tokens are read, and written back as tokens") {
  ScratchJournal scratch("nan");
  scratch.append_raw(R"({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]})" "\n"
                     R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": "2026-01-01T00:00:00"})" "\n"
                     R"({"op_code": 7, "worker_id": "w", "trial_id": 0, "step": 1, "intermediate_value": NaN})" "\n"
                     R"({"op_code": 8, "worker_id": "w", "trial_id": 0, "user_attr": {"note": "NaN Infinity"}})" "\n"
                     R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1, "values": [-Infinity], "datetime_complete": "2026-01-01T00:00:01"})" "\n");
  JournalStorage j(scratch.path);
  const FrozenTrial& t = j.trial(0);
  CHECK(std::isnan(t.intermediate_values.at(1)));
  CHECK(t.user_attrs["note"] == "NaN Infinity");
  CHECK(*t.value() == -INFINITY);
  j.set_trial_user_attr(j.create_trial(0), "v", NAN);
  CHECK(scratch.text().find(R"("v":NaN)") != std::string::npos);
  CHECK(std::isnan(JournalStorage(scratch.path).trial(1).user_attrs["v"].get<double>()));
}
