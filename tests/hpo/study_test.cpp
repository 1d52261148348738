#include "common/user_error.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/storage/process_liveness.hpp"
#include "hpo/study.hpp"
#include "scratch_folder.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <limits>
#include <set>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

struct ScratchStudy : ScratchFolder {
  explicit ScratchStudy(const std::string& tag) : ScratchFolder("study_test", tag) {}

  StudySpec spec(int n_trials = 20, const std::string& sampler = "tpe", std::uint64_t seed = 3) const {
    json document = json::parse(R"({
      "name": "unit", "direction": "minimize",
      "search_space": {
        "x":    {"type": "float", "low": -3, "high": 3},
        "kind": {"type": "categorical", "choices": ["a", "b"]},
        "k":    {"type": "int", "low": 1, "high": 5, "when": {"kind": "b"}}}})");
    document["n_trials"] = n_trials;
    document["seed"] = seed;
    document["sampler"] = {{"type", sampler}};
    return parse_study_spec(document, dir / "study.json");
  }
};

Study open(const StudySpec& spec) { return Study(spec, make_sampler(spec)); }

double objective(const Params& p) { return p.at("x") * p.at("x") + (p.count("k") ? p.at("k") : 3.0); }

}  // namespace

TEST_CASE("a study resumed from its journal has the same trials and stops at n_trials in total") {
  ScratchStudy scratch("resume");
  StudySpec spec = scratch.spec(5);
  std::vector<FrozenTrial> before;
  {
    Study study = open(spec);
    for (int i = 0; i < 3; ++i) {
      AskedTrial t = study.ask();
      CHECK(spec.search_space.is_valid_assignment(t.params));
      study.report(t.number, 1, 10.0 + i);
      study.tell(t.number, TrialState::Complete, objective(t.params));
    }
    before = study.trials();
  }
  Study resumed = open(spec);
  std::vector<FrozenTrial> after = resumed.trials();
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].params == before[i].params);
    CHECK(after[i].value() == before[i].value());
    CHECK(after[i].intermediate_values == before[i].intermediate_values);
    CHECK(after[i].state == TrialState::Complete);
  }
  CHECK(resumed.n_finished() == 3);
  CHECK_FALSE(resumed.is_done());
  for (int i = 0; i < 2; ++i) {
    AskedTrial t = resumed.ask();
    resumed.tell(t.number, TrialState::Complete, objective(t.params));
  }
  CHECK(resumed.is_done());
  CHECK(resumed.best_trial()->value() == best_of(resumed.trials(), StudyDirection::Minimize)->value());
}

TEST_CASE("enqueued params are served first, then the sampler takes over") {
  ScratchStudy scratch("enqueue");
  Study study = open(scratch.spec());
  Params fixed{{"x", 1.25}, {"kind", 1}, {"k", 4}};
  int number = study.enqueue(fixed);
  AskedTrial first = study.ask();
  CHECK(first.from_queue);
  CHECK(first.number == number);
  CHECK(first.params == fixed);
  CHECK(study.trial(first.number).state == TrialState::Running);
  AskedTrial second = study.ask();
  CHECK_FALSE(second.from_queue);
  CHECK(second.number == number + 1);
}

TEST_CASE("metric names are recorded as Optuna's set_metric_names does, and rewritten only when they change") {
  ScratchStudy scratch("metric_names");
  const StudySpec spec = scratch.spec();
  const auto journal_size = [&] { return std::filesystem::file_size(spec.storage); };
  Study study = open(spec);
  study.set_metric_names({"val_nll"});
  CHECK(study.system_attrs()[kMetricNamesAttr] == json::array({"val_nll"}));
  const auto size = journal_size();
  study.set_metric_names({"val_nll"});
  Study other = open(spec);  // another process naming it the same way writes nothing either
  other.set_metric_names({"val_nll"});
  CHECK(journal_size() == size);
  other.set_metric_names({"calibration_error"});
  CHECK(journal_size() > size);
  CHECK(study.system_attrs()[kMetricNamesAttr] == json::array({"calibration_error"}));
}

TEST_CASE("tell refuses unknown and finished trials without writing") {
  ScratchStudy scratch("tell");
  Study study = open(scratch.spec());
  AskedTrial t = study.ask();
  study.tell(t.number, TrialState::Complete, 1.0);
  auto size = std::filesystem::file_size(study.spec().storage);
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Complete, 2.0), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(42, TrialState::Fail), bfhpo::UserError);
  CHECK(std::filesystem::file_size(study.spec().storage) == size);
  CHECK(study.trial(t.number).value() == 1.0);
}

TEST_CASE("a stale worker elsewhere is re-queued, a silent live worker here is not, an ask/tell trial is left") {
  ScratchStudy scratch("stale");
  StudySpec spec = scratch.spec(4);
  spec.stale_after_s = 60;
  Study study = open(spec);
  // A worker on another host, silent for 10 minutes: only its heartbeat can tell.
  AskedTrial remote = *study.ask_if_room();
  study.storage().set_trial_system_attr(remote.trial_id, kWorkerAttr, {{"host", "elsewhere.invalid"}, {"pid", 4242}});
  study.storage().set_trial_system_attr(remote.trial_id, kHeartbeatAttr, unix_seconds_now() - 600);
  // A worker on this host that is stopped (alive, silent as long): kept.
  const pid_t stopped = ::fork();
  if (stopped == 0) {
    ::pause();
    ::_exit(0);
  }
  ::kill(stopped, SIGSTOP);
  AskedTrial paused = *study.ask_if_room();
  study.storage().set_trial_system_attr(paused.trial_id, kWorkerAttr, {{"host", this_host()}, {"pid", stopped}});
  study.storage().set_trial_system_attr(paused.trial_id, kHeartbeatAttr, unix_seconds_now() - 600);
  // An ask/tell caller's trial, as silent: shown as abandoned, never taken automatically.
  AskedTrial asked = study.ask();
  study.storage().set_trial_system_attr(asked.trial_id, kHeartbeatAttr, unix_seconds_now() - 600);
  AskedTrial alive = study.ask();  // fresh heartbeat

  Study other_worker = open(spec);
  REQUIRE(other_worker.recover_stale_trials() == std::vector<int>{remote.number});
  CHECK(study.trial(remote.number).state == TrialState::Fail);
  CHECK(study.trial(paused.number).state == TrialState::Running);
  CHECK(study.trial(asked.number).state == TrialState::Running);
  CHECK(study.trial(alive.number).state == TrialState::Running);
  CHECK(other_worker.recover_stale_trials().empty());  // already recovered
  const double now = unix_seconds_now();
  CHECK_THAT(abandoned_reason(study.trial(asked.number), spec.stale_after_s, now), Catch::Contains("stale heartbeat"));
  CHECK(abandoned_reason(study.trial(paused.number), spec.stale_after_s, now).empty());
  CHECK(abandoned_reason(study.trial(alive.number), spec.stale_after_s, now).empty());
  ::kill(stopped, SIGKILL);
  ::waitpid(stopped, nullptr, 0);
  CHECK_THAT(abandoned_reason(study.trial(paused.number), spec.stale_after_s, now), Catch::Contains("is gone"));

  AskedTrial retry = *other_worker.ask_if_room();
  CHECK(retry.from_queue);
  CHECK(retry.params == remote.params);
  // By hand: the ask/tell caller's trial is released and its params served again.
  const int copy = other_worker.requeue(asked.number);
  CHECK(other_worker.trial(asked.number).state == TrialState::Fail);
  CHECK(other_worker.trial(copy).state == TrialState::Waiting);
  CHECK(other_worker.trial(copy).params == asked.params);
  CHECK_THROWS_AS(other_worker.requeue(asked.number), bfhpo::UserError);  // FAIL now
}

TEST_CASE("a RUNNING trial whose worker process on this host is gone is re-queued at once") {
  ScratchStudy scratch("dead_worker");
  StudySpec spec = scratch.spec(3);
  Study study = open(spec);
  AskedTrial mine = *study.ask_if_room();  // this process: alive
  AskedTrial orphan = *study.ask_if_room();
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);  // the child is gone now
  study.storage().set_trial_system_attr(orphan.trial_id, kWorkerAttr, {{"host", this_host()}, {"pid", child}});
  study.heartbeat(orphan.number);  // a fresh heartbeat does not keep a dead worker's trial

  Study restarted = open(spec);
  REQUIRE(restarted.recover_stale_trials() == std::vector<int>{orphan.number});
  CHECK(restarted.trial(mine.number).state == TrialState::Running);
  CHECK(restarted.trial(orphan.number).state == TrialState::Fail);
  CHECK_THAT(restarted.trial(orphan.number).system_attrs[kFailReasonAttr].get<std::string>(),
             Catch::Contains("interrupted"));
  AskedTrial retry = restarted.ask();
  CHECK(retry.from_queue);
  CHECK(retry.params == orphan.params);

  CHECK(study.fail_and_requeue(mine.number, "interrupted (Ctrl-C)"));
  CHECK_FALSE(study.fail_and_requeue(mine.number, "twice"));  // already FAIL
  CHECK(restarted.ask().params == mine.params);
}

TEST_CASE("a worker record whose pid now runs another process is a gone worker; a record without a start time is judged by the pid") {
  ScratchStudy scratch("reused_pid");
  StudySpec spec = scratch.spec(4);
  Study study = open(spec);
  const pid_t live = ::fork();  // stands for whatever process reused the pid
  if (live == 0) {
    ::pause();
    ::_exit(0);
  }
  const auto started = process_start_time(live);
  REQUIRE(started);
  AskedTrial reused = *study.ask_if_room();
  study.storage().set_trial_system_attr(reused.trial_id, kWorkerAttr,
                                        {{"host", this_host()}, {"pid", live}, {"start_time", *started - 1}});
  AskedTrial running = *study.ask_if_room();
  study.storage().set_trial_system_attr(running.trial_id, kWorkerAttr,
                                        {{"host", this_host()}, {"pid", live}, {"start_time", *started}});
  AskedTrial older_record = *study.ask_if_room();
  study.storage().set_trial_system_attr(older_record.trial_id, kWorkerAttr, {{"host", this_host()}, {"pid", live}});

  Study other = open(spec);
  CHECK(other.recover_stale_trials() == std::vector<int>{reused.number});
  CHECK(other.trial(running.number).state == TrialState::Running);
  CHECK(other.trial(older_record.number).state == TrialState::Running);
  CHECK_THROWS_AS(other.tell(running.number, TrialState::Complete, 1.0), bfhpo::UserError);  // a live worker's
  ::kill(live, SIGKILL);
  ::waitpid(live, nullptr, 0);
}

TEST_CASE("a worker records its own start time beside its pid") {
  ScratchStudy scratch("own_start");
  Study study = open(scratch.spec(2));
  const AskedTrial asked = *study.ask_if_room();
  const json worker = study.trial(asked.number).system_attrs.at(kWorkerAttr);
  CHECK(worker.at("pid") == ::getpid());
  CHECK(worker.at("start_time").get<unsigned long long>() == *process_start_time(::getpid()));
}

TEST_CASE("enqueued trials do not bypass n_trials: ask_if_room serves them only while there is room") {
  ScratchStudy scratch("enqueued");
  StudySpec spec = scratch.spec(2, "random");
  Study study = open(spec);
  for (double x : {0.5, 1.0, 1.5, 2.0}) study.enqueue({{"x", x}, {"kind", 0.0}});
  std::vector<double> served;
  while (auto asked = study.ask_if_room()) {
    served.push_back(asked->params.at("x"));
    study.tell(asked->number, TrialState::Complete, 1.0);
  }
  CHECK(served == std::vector<double>{0.5, 1.0});
  CHECK(study.n_finished() == 2);
  CHECK(study.is_done());
  // The rest stay WAITING for a later, larger run.
  int waiting = 0;
  for (const auto& t : study.trials()) waiting += t.state == TrialState::Waiting;
  CHECK(waiting == 2);
}

TEST_CASE("a new trial's params are in the storage with the trial, whatever other writers appended") {
  ScratchStudy scratch("interleaved");
  StudySpec spec = scratch.spec(100, "random");
  Study first = open(spec), second = open(spec);
  for (int i = 0; i < 10; ++i) {
    AskedTrial a = first.ask();
    second.enqueue({{"x", 0.25}, {"kind", 1.0}, {"k", 2.0}});  // appended between a's creation and the next read
    AskedTrial b = second.ask_if_room().value();
    CHECK(b.from_queue);
    CHECK(a.number != b.number);
    CHECK(first.trial(a.number).params == a.params);
    first.tell(a.number, TrialState::Complete, objective(a.params));
    second.tell(b.number, TrialState::Complete, objective(b.params));
  }
  for (const auto& t : open(spec).trials()) {
    CHECK(t.state == TrialState::Complete);
    CHECK(t.params.count("x") == 1);
  }
}

TEST_CASE("ask_if_room: four processes sharing a journal start exactly n_trials trials") {
  ScratchStudy scratch("room");
  StudySpec spec = scratch.spec(13, "random");
  open(spec);  // creates the study before the workers race
  std::vector<pid_t> workers;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int status = 0;
      try {
        Study study = open(spec);
        while (auto asked = study.ask_if_room()) study.tell(asked->number, TrialState::Complete, 1.0);
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    workers.push_back(pid);
  }
  for (const pid_t pid : workers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  Study study = open(spec);
  CHECK(study.trials().size() == 13);
  CHECK(study.n_finished() == 13);
  CHECK_FALSE(study.ask_if_room().has_value());

  // A re-queued trial is still served when the study is full of started trials.
  Study other = open(scratch.spec(14, "random"));
  auto last = other.ask_if_room();
  REQUIRE(last);
  CHECK_FALSE(other.ask_if_room().has_value());  // 13 finished + 1 running
  REQUIRE(other.fail_and_requeue(last->number, "interrupted"));
  auto retry = other.ask_if_room();
  REQUIRE(retry);
  CHECK(retry->from_queue);
}

TEST_CASE("a trial re-queued after a worker tried to claim runs before any new trial is created") {
  ScratchStudy scratch("requeue_race");
  const StudySpec spec = scratch.spec(2, "random");
  Study survivor = open(spec), victim = open(spec);
  const auto first = survivor.ask_if_room();
  const auto second = victim.ask_if_room();
  REQUIRE(first);
  REQUIRE(second);
  survivor.tell(first->number, TrialState::Complete, 1.0);
  // The survivor found no WAITING trial to claim; then the victim's trial is re-queued.
  REQUIRE(survivor.fail_and_requeue(second->number, "interrupted: its worker process is gone"));
  const std::vector<FrozenTrial> trials = survivor.trials();
  CHECK(room_to_claim(trials, spec.n_trials));
  CHECK_FALSE(room_to_create(trials, spec.n_trials));  // a new trial here would leave the copy WAITING for good
  const auto retry = survivor.ask_if_room();
  REQUIRE(retry);
  CHECK(retry->from_queue);
  CHECK(retry->params == second->params);
  survivor.tell(retry->number, TrialState::Complete, 2.0);
  CHECK(survivor.is_done());
  CHECK_FALSE(survivor.ask_if_room().has_value());
  for (const auto& t : survivor.trials()) CHECK(t.state != TrialState::Waiting);
}

TEST_CASE("one seed, one worker: the same sequence, two workers on one journal: different trials") {
  ScratchStudy a("seed_a"), b("seed_b"), shared("seed_shared");
  for (const char* sampler : {"random", "tpe"}) {
    Study first = open(a.spec(30, sampler));
    Study second = open(b.spec(30, sampler));
    for (int i = 0; i < 14; ++i) {  // past TPE's 10 startup trials
      AskedTrial x = first.ask(), y = second.ask();
      CHECK(x.params == y.params);
      first.tell(x.number, TrialState::Complete, objective(x.params));
      second.tell(y.number, TrialState::Complete, objective(y.params));
    }
    std::filesystem::remove(a.spec().storage);
    std::filesystem::remove(b.spec().storage);
  }
  StudySpec spec = shared.spec(100, "tpe");  // 10 startup trials (fewer for a budget under 100)
  Study w1 = open(spec), w2 = open(spec);
  std::set<int> x_tenths;  // of [-3, 3]
  int kind_b = 0;
  for (int i = 0; i < 5; ++i) {
    AskedTrial x = w1.ask(), y = w2.ask();
    CHECK(x.number != y.number);
    CHECK(x.params != y.params);
    for (const AskedTrial* t : {&x, &y}) {
      x_tenths.insert(static_cast<int>(std::floor((t->params.at("x") + 3) / 0.6)));
      kind_b += t->params.at("kind") == 1.0;
    }
    w1.tell(x.number, TrialState::Complete, objective(x.params));
    w2.tell(y.number, TrialState::Complete, objective(y.params));
  }
  CHECK(w1.n_finished() == 10);
  // Together the two workers' 10 startup trials are one Latin hypercube.
  CHECK(x_tenths.size() == 10);
  CHECK(kind_b == 5);
}

TEST_CASE("opening: a missing journal or study is a UserError naming the studies there and writes nothing") {
  ScratchStudy scratch("open");
  StudySpec spec = scratch.spec();
  CHECK_THROWS_AS(Study(spec, make_sampler(spec), Study::Open::MustExist), bfhpo::UserError);
  CHECK_FALSE(std::filesystem::exists(spec.storage));
  { open(spec).ask(); }
  StudySpec other = spec;
  other.name = "someone-else";
  auto size = std::filesystem::file_size(spec.storage);
  CHECK_THROWS_WITH(Study(other, make_sampler(other), Study::Open::MustExist),
                    Catch::Contains("no study 'someone-else'") && Catch::Contains("it holds 'unit'"));
  CHECK_THROWS_WITH(Study(other, nullptr, Study::Open::ReadOnly), Catch::Contains("it holds 'unit'"));
  CHECK(std::filesystem::file_size(spec.storage) == size);
}

TEST_CASE("a storage holds many studies, as in Optuna: each is selected by its name") {
  ScratchStudy scratch("many");
  StudySpec first = scratch.spec(3);
  StudySpec second = first;
  second.name = "second";
  second.objectives = {ObjectiveSpec{"", StudyDirection::Maximize}};
  Study a = open(first);
  const AskedTrial a0 = a.ask();
  a.tell(a0.number, TrialState::Complete, 1.0);
  Study b = open(second);
  for (int i = 0; i < 2; ++i) {
    const AskedTrial t = b.ask();
    CHECK(t.number == i);  // numbers count within a study
    b.tell(t.number, TrialState::Complete, 10.0 + i);
  }
  CHECK(a.trials().size() == 1);
  CHECK(b.trials().size() == 2);
  CHECK(b.best_trial()->value() == 11.0);
  Study reopened(first, nullptr, Study::Open::ReadOnly);
  REQUIRE(reopened.trials().size() == 1);
  CHECK(reopened.trials()[0].value() == 1.0);
  CHECK(reopened.storage().studies().size() == 2);
}

TEST_CASE("the timeout is measured from opening the study") {
  ScratchStudy scratch("timeout");
  StudySpec spec = scratch.spec();
  CHECK_FALSE(open(spec).timed_out());
  spec.timeout_s = 0.05;
  Study study = open(spec);
  CHECK_FALSE(study.timed_out());
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  CHECK(study.timed_out());
}

TEST_CASE("tell and report refuse non-finite values, values on PRUNED/FAIL and negative steps, writing nothing") {
  ScratchStudy scratch("tell_values");
  Study study = open(scratch.spec());
  const AskedTrial t = study.ask();
  const auto size = [&] { return std::filesystem::file_size(study.spec().storage); };
  const auto before = size();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Complete, inf), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Complete, -inf), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Complete, std::nan("")), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Fail, 7.0), bfhpo::UserError);
  CHECK_THROWS_AS(study.tell(t.number, TrialState::Pruned, 7.0), bfhpo::UserError);
  CHECK_THROWS_AS(study.report(t.number, -5, 1.0), bfhpo::UserError);
  CHECK(size() == before);
  CHECK(study.trial(t.number).state == TrialState::Running);
  study.tell(t.number, TrialState::Fail);
  CHECK(study.trial(t.number).state == TrialState::Fail);
  CHECK_FALSE(study.trial(t.number).value());
}

TEST_CASE("a trial that another live process on this host trains cannot be told or reported") {
  ScratchStudy scratch("held");
  const StudySpec spec = scratch.spec();
  int number = 0;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t worker = ::fork();
  if (worker == 0) {  // the worker claims a trial and stays alive until killed
    Study study = open(spec);
    const AskedTrial t = *study.ask_if_room();
    (void)!::write(ready[1], &t.number, sizeof t.number);
    ::pause();
    ::_exit(0);
  }
  REQUIRE(::read(ready[0], &number, sizeof number) == sizeof number);
  Study study = open(spec);
  CHECK_THROWS_WITH(study.tell(number, TrialState::Fail),
                    Catch::Contains("being trained by bfhpo optimize (pid " + std::to_string(worker)));
  CHECK_THROWS_WITH(study.report(number, 1, 0.5), Catch::Contains("being trained"));
  CHECK_THROWS_WITH(study.requeue(number),
                    Catch::Contains("requeueing it would pull it from under") && !Catch::Contains("telling"));
  ::kill(worker, SIGKILL);
  ::waitpid(worker, nullptr, 0);
  // Its worker gone, the trial may be told (as `tell --state fail` releases a dead worker's trial).
  CHECK_NOTHROW(study.tell(number, TrialState::Fail));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("a study file whose parameter changed kind under the same study name is refused on open") {
  ScratchStudy scratch("changed_space");
  StudySpec spec = scratch.spec();
  {
    Study study = open(spec);
    const AskedTrial t = study.ask();
    study.tell(t.number, TrialState::Complete, objective(t.params));
  }
  json document = spec.document;
  document["search_space"]["x"] = {{"type", "categorical"}, {"choices", {1, 2}}};
  const StudySpec changed = parse_study_spec(document, spec.source);
  const auto before = std::filesystem::file_size(spec.storage);
  CHECK_THROWS_WITH(open(changed), Catch::Contains("search_space.x") && Catch::Contains("now categorical"));
  CHECK(std::filesystem::file_size(spec.storage) == before);
  document["search_space"]["x"] = {{"type", "float"}, {"low", -10}, {"high", 10}};  // a wider range: fine
  CHECK_NOTHROW(open(parse_study_spec(document, spec.source)));
}
