#include "hpo/storage/postgres_storage.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/postgres_connection.hpp"
#include "test_database.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <thread>

using namespace bfhpo::hpo;
using bfhpo::hpo::testing::TestDatabase;

namespace {

const Admission always = [](const std::vector<FrozenTrial>&) { return true; };

Admission room_below(int n_trials) {
  return [n_trials](const std::vector<FrozenTrial>& trials) {
    int started = 0;
    for (const auto& t : trials) started += t.state != TrialState::Waiting;
    return started < n_trials;
  };
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("what one storage writes, another reads: trials, params, values, attributes, heartbeats") {
  TestDatabase db;
  auto writer = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
  const int study = writer->get_or_create_study("s", {StudyDirection::Maximize});
  CHECK(writer->get_or_create_study("s", {StudyDirection::Maximize}) == study);
  const std::map<std::string, Distribution> distributions = {
      {"lr", FloatDistribution{1e-5, 1.0, true, std::nullopt}}, {"kind", CategoricalDistribution{{"a", "b"}}}};
  const int first = *writer->create_trial_if(study, always, {{"bfhpo:worker", "w1"}});
  writer->set_trial_params(first, {{"lr", 0.1 / 3}, {"kind", 1}}, distributions);
  writer->set_trial_intermediate_value(first, 0, 2.5);
  writer->set_trial_user_attr(first, "note", {{"k", 1}});
  const double before = now_s();
  writer->record_heartbeat(first);
  REQUIRE(writer->set_trial_state_values(first, TrialState::Complete, {1.0 / 7}));
  const int second = *writer->create_trial_if(study, always, {});

  auto reader = open_postgres_storage(db.url(), StorageAccess::ReadOnly);
  REQUIRE(reader->find_study("s") == study);
  CHECK(reader->studies().at(0).directions == Directions{StudyDirection::Maximize});
  const auto& trials = reader->trials_of(study);
  REQUIRE(trials.size() == 2);
  const FrozenTrial& t = trials[0];
  CHECK(t.trial_id == first);
  CHECK(t.number == 0);
  CHECK(t.state == TrialState::Complete);
  CHECK(*t.value() == 1.0 / 7);  // exact
  CHECK(t.params == Params{{"lr", 0.1 / 3}, {"kind", 1}});
  CHECK(t.distributions == distributions);
  CHECK(t.intermediate_values == std::map<int, double>{{0, 2.5}});
  CHECK(t.user_attrs == nlohmann::json{{"note", {{"k", 1}}}});
  CHECK(t.system_attrs["bfhpo:worker"] == "w1");
  // Same host, same clock: the heartbeat is the server's now() read back as unix seconds.
  CHECK(t.system_attrs[kHeartbeatAttr].get<double>() == Approx(before).margin(5.0));
  CHECK(!t.datetime_complete.empty());
  CHECK(trials[1].trial_id == second);
  CHECK(trials[1].state == TrialState::Running);
  CHECK_THROWS_AS(reader->record_heartbeat(second), std::logic_error);

  SECTION("a finished trial never changes") {
    CHECK_FALSE(writer->set_trial_state_values(first, TrialState::Fail));
    writer->set_trial_user_attr(first, "late", 1);
    writer->set_trial_intermediate_value(first, 5, 9.0);
    reader->sync();
    CHECK(reader->trial(first).state == TrialState::Complete);
    CHECK_FALSE(reader->trial(first).user_attrs.contains("late"));
    CHECK(reader->trial(first).intermediate_values.size() == 1);
  }
  SECTION("a sync sees another writer's changes to unfinished trials") {
    writer->set_trial_params(second, {{"lr", 0.5}}, distributions);
    REQUIRE(writer->set_trial_state_values(second, TrialState::Pruned));
    const int third = *writer->create_trial_if(study, always, {});
    reader->sync();
    CHECK(reader->trial(second).state == TrialState::Pruned);
    CHECK(reader->trial(second).params.at("lr") == 0.5);
    CHECK(reader->trial(third).number == 2);
  }
  SECTION("a study asked for with the other direction is a UserError") {
    CHECK_THROWS_AS(writer->get_or_create_study("s", {StudyDirection::Minimize}), bfhpo::UserError);
  }
}

TEST_CASE("4 storages creating trials while finished + running < 40 create exactly 40, numbered 0..39") {
  TestDatabase db;
  int study = open_postgres_storage(db.url(), StorageAccess::ReadWrite)->get_or_create_study("race", {StudyDirection::Minimize});
  std::vector<std::vector<int>> created(4);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      auto storage = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
      while (auto id = storage->create_trial_if(study, room_below(40), {})) {
        created[w].push_back(*id);
        storage->set_trial_state_values(*id, TrialState::Complete, {static_cast<double>(w)});
      }
    });
  for (auto& w : workers) w.join();
  std::set<int> ids;
  for (const auto& c : created) ids.insert(c.begin(), c.end());
  CHECK(ids.size() == 40);
  auto reader = open_postgres_storage(db.url(), StorageAccess::ReadOnly);
  const auto& trials = reader->trials_of(study);
  REQUIRE(trials.size() == 40);
  for (int i = 0; i < 40; ++i) {
    CHECK(trials[i].number == i);
    CHECK(trials[i].state == TrialState::Complete);
  }
}

TEST_CASE("a WAITING trial is claimed by exactly one of two storages, with its params") {
  TestDatabase db;
  auto a = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
  auto b = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
  const int study = a->get_or_create_study("q", {StudyDirection::Minimize});
  FrozenTrial waiting;
  waiting.state = TrialState::Waiting;
  waiting.params = {{"x", 0.25}};
  waiting.distributions = {{"x", FloatDistribution{0, 1, false, std::nullopt}}};
  const int queued = a->create_trial(study, &waiting);
  CHECK(a->trial(queued).state == TrialState::Waiting);
  CHECK(a->trial(queued).datetime_start.empty());
  b->sync();
  std::optional<int> by_a, by_b;
  std::thread ta([&] { by_a = a->claim_waiting_trial(study, always, {{"who", "a"}}); });
  std::thread tb([&] { by_b = b->claim_waiting_trial(study, always, {{"who", "b"}}); });
  ta.join();
  tb.join();
  REQUIRE(by_a.has_value() != by_b.has_value());
  auto& winner = by_a ? a : b;
  const FrozenTrial& claimed = winner->trial(queued);
  CHECK(claimed.state == TrialState::Running);
  CHECK(claimed.params == Params{{"x", 0.25}});
  CHECK(claimed.system_attrs["who"] == (by_a ? "a" : "b"));
  CHECK(!claimed.datetime_start.empty());
  CHECK_FALSE(a->claim_waiting_trial(study, always, {}));
}

TEST_CASE("a terminated connection mid-study is restored and the running trial goes on") {
  TestDatabase db;
  auto storage = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
  const int study = storage->get_or_create_study("loss", {StudyDirection::Minimize});
  const int running = *storage->create_trial_if(study, always, {});
  PostgresConnection killer(db.url());
  killer.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  storage->set_trial_intermediate_value(running, 0, 1.0);
  REQUIRE(storage->set_trial_state_values(running, TrialState::Complete, {0.5}));
  auto reader = open_postgres_storage(db.url(), StorageAccess::ReadOnly);
  CHECK(reader->trials_of(study).at(0).state == TrialState::Complete);
  CHECK(reader->trials_of(study).at(0).intermediate_values.at(0) == 1.0);
}

TEST_CASE("a read-only open of an empty database writes nothing and says so") {
  TestDatabase db;
  CHECK_THROWS_WITH(open_postgres_storage(db.url(), StorageAccess::ReadOnly), Catch::Contains("no Optuna study yet"));
  PostgresConnection look(db.url());
  CHECK(look.exec("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")
            .integer(0, 0) == 0);
}

TEST_CASE("a study system attribute (the metric names) is written once per key and read by another storage") {
  TestDatabase db;
  auto writer = open_postgres_storage(db.url(), StorageAccess::ReadWrite);
  const int study = writer->get_or_create_study("s", {StudyDirection::Minimize});
  writer->set_study_system_attr(study, "study:metric_names", nlohmann::json::array({"val_nll"}));
  CHECK(writer->studies().at(0).system_attrs["study:metric_names"] == nlohmann::json::array({"val_nll"}));
  writer->set_study_system_attr(study, "study:metric_names", nlohmann::json::array({"calibration_error"}));
  auto reader = open_postgres_storage(db.url(), StorageAccess::ReadOnly);
  CHECK(reader->studies().at(0).system_attrs ==
        nlohmann::json{{"study:metric_names", nlohmann::json::array({"calibration_error"})}});
  CHECK_THROWS_AS(reader->set_study_system_attr(study, "k", 1), std::logic_error);
}
