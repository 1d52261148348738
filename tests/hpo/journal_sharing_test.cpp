// The journal file shared with other writers: Optuna's lock protocols, a
// last record without its newline, a journal moved under a writer, op codes
// Optuna skips. All on real files.
#include "common/user_error.hpp"
#include "hpo/storage/journal_file_lock.hpp"
#include "hpo/storage/journal_storage.hpp"
#include "hpo/storage/process_liveness.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace bfhpo::hpo;
namespace fs = std::filesystem;

namespace {

struct ScratchDir {
  fs::path dir;
  explicit ScratchDir(const std::string& tag)
      : dir(fs::temp_directory_path() / ("bfhpo_sharing_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ScratchDir() { fs::remove_all(dir); }
  fs::path journal() const { return dir / "study.journal"; }
  std::string text() const {
    std::ifstream in(journal());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write(const std::string& bytes) const { std::ofstream(journal(), std::ios::trunc) << bytes; }
  // Entries of the folder other than the journal (lock files, leftovers).
  std::vector<std::string> others() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path() != journal()) names.push_back(entry.path().filename().string());
    return names;
  }
};

const char* kStudyLine = R"({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]})";
const char* kTrialLine = R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": "2026-01-01T00:00:00"})";
const char* kCompleteLine = R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1, "values": [0.5], "datetime_complete": "2026-01-01T00:00:01"})";

pid_t a_dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

}  // namespace

TEST_CASE("a complete last record without its newline is read, and the next writer adds the newline") {
  ScratchDir scratch("no_newline");
  const std::string lines = std::string(kStudyLine) + "\n" + kTrialLine + "\n" + kCompleteLine;  // no final '\n'
  scratch.write(lines);
  JournalStorage journal(scratch.journal());
  REQUIRE(journal.trials_of(0).size() == 1);
  CHECK(journal.trial(0).state == TrialState::Complete);
  CHECK(journal.trial(0).value() == 0.5);
  const int next = journal.create_trial(0);
  CHECK(next == 1);
  const std::string text = scratch.text();
  CHECK(text.compare(0, lines.size() + 1, lines + "\n") == 0);  // kept whole, then the newline
  JournalStorage reader(scratch.journal());
  REQUIRE(reader.trials_of(0).size() == 2);
  CHECK(reader.trial(0).value() == 0.5);
  // The object that wrote goes on reading from its own offset.
  journal.set_trial_state_values(next, TrialState::Complete, {2.0});
  CHECK(JournalStorage(scratch.journal()).trial(1).value() == 2.0);
}

TEST_CASE("op code 10 (DISCARD_TRIALS) is skipped as Optuna skips it; other unknown op codes stay errors") {
  ScratchDir scratch("discard");
  scratch.write(std::string(kStudyLine) + "\n" + kTrialLine + "\n" +
                R"({"op_code": 10, "worker_id": "w", "study_id": 0, "trial_ids": [0]})" "\n" + kCompleteLine + "\n");
  JournalStorage journal(scratch.journal());
  REQUIRE(journal.trials_of(0).size() == 1);
  CHECK(journal.trial(0).state == TrialState::Complete);
  scratch.write(std::string(kStudyLine) + "\n" + R"({"op_code": 11, "worker_id": "w"})" "\n");
  CHECK_THROWS_WITH(JournalStorage(scratch.journal()), Catch::Contains("line 2") && Catch::Contains("op_code"));
}

TEST_CASE("a writer waits while Optuna holds its symlink or open lock, then writes") {
  for (const bool symlink_lock : {true, false}) {
    ScratchDir scratch(symlink_lock ? "optuna_symlink" : "optuna_open");
    JournalStorage journal(scratch.journal());
    journal.get_or_create_study("s", {StudyDirection::Minimize});
    const fs::path lock = scratch.journal().string() + ".lock";
    if (symlink_lock) fs::create_symlink(scratch.journal(), lock);  // JournalFileSymlinkLock
    else std::ofstream(lock).flush();                                // JournalFileOpenLock
    const std::string before = scratch.text();
    auto writer = std::async(std::launch::async, [&] { return journal.create_trial(0); });
    CHECK(writer.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
    CHECK(scratch.text() == before);
    // Optuna's release: rename aside, unlink.
    const fs::path aside = lock.string() + "0123.rename";
    fs::rename(lock, aside);
    fs::remove(aside);
    CHECK(writer.get() == 0);
    CHECK(JournalStorage(scratch.journal()).trials_of(0).size() == 1);
    CHECK(scratch.others().empty());  // bfhpo released its own lock
  }
}

TEST_CASE("a lock left by a dead bfhpo process on this host (or a reused pid) is broken at once, a foreign one after the grace") {
  ScratchDir scratch("stale_lock");
  std::ofstream(scratch.journal()).flush();
  const fs::path lock_path = scratch.journal().string() + ".lock";
  {
    std::ofstream(lock_path) << "bfhpo " << this_host() << " " << a_dead_pid() << "\n";
    JournalFileLock lock(scratch.journal(), 3600.0);  // a grace no test waits for
    auto taken = std::async(std::launch::async, [&] { lock.acquire(); });
    REQUIRE(taken.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    taken.get();
    lock.release();
    CHECK(scratch.others().empty());
  }
  {
    // A live process's lock (this one's pid, another lock object) is not broken without the grace.
    std::ofstream(lock_path) << "bfhpo " << this_host() << " " << ::getpid() << "\n";
    JournalFileLock lock(scratch.journal(), 3600.0);
    auto taken = std::async(std::launch::async, [&] { lock.acquire(); });
    CHECK(taken.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
    fs::remove(lock_path);
    taken.get();
    lock.release();
  }
  {
    // This pid with another start time: the pid was reused, the holder is gone; broken at once.
    std::ofstream(lock_path) << "bfhpo " << this_host() << " " << ::getpid() << " "
                             << *process_start_time(::getpid()) + 1 << "\n";
    JournalFileLock lock(scratch.journal(), 30.0);  // were it not broken, the grace ends the wait after the failure
    auto taken = std::async(std::launch::async, [&] { lock.acquire(); });
    REQUIRE(taken.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    taken.get();
    std::ifstream held(lock_path);
    std::string tag, host;
    long pid = 0;
    unsigned long long start = 0;
    CHECK((held >> tag >> host >> pid >> start));  // the new holder's record has its start time
    CHECK(start == *process_start_time(::getpid()));
    lock.release();
  }
  {
    // This pid with its own start time: alive, not broken without the grace.
    std::ofstream(lock_path) << "bfhpo " << this_host() << " " << ::getpid() << " " << *process_start_time(::getpid())
                             << "\n";
    JournalFileLock lock(scratch.journal(), 3600.0);
    auto taken = std::async(std::launch::async, [&] { lock.acquire(); });
    CHECK(taken.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
    fs::remove(lock_path);
    taken.get();
    lock.release();
  }
  {
    fs::create_symlink(scratch.journal(), lock_path);  // Optuna's, its process gone: no pid to check
    JournalFileLock lock(scratch.journal(), 0.5);
    auto taken = std::async(std::launch::async, [&] { lock.acquire(); });
    CHECK(taken.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);  // within the grace
    REQUIRE(taken.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    taken.get();
    CHECK(fs::is_regular_file(fs::symlink_status(lock_path)));  // now bfhpo's own
    lock.release();
    CHECK(scratch.others().empty());  // no .rename leftovers
  }
}

TEST_CASE("a journal renamed, deleted or replaced under a writer: the write is refused, the moved file untouched") {
  ScratchDir scratch("moved");
  JournalStorage journal(scratch.journal());
  journal.get_or_create_study("s", {StudyDirection::Minimize});
  const int trial = journal.create_trial(0);
  const fs::path moved = scratch.dir / "moved.journal";
  fs::rename(scratch.journal(), moved);
  const auto size = fs::file_size(moved);
  CHECK_THROWS_WITH(journal.set_trial_state_values(trial, TrialState::Complete, {1.0}),
                    Catch::Contains("renamed, deleted or replaced"));
  CHECK(fs::file_size(moved) == size);
  CHECK_FALSE(fs::exists(scratch.journal()));
  std::ofstream(scratch.journal()).flush();  // a new journal at the old path
  CHECK_THROWS_AS(journal.set_trial_state_values(trial, TrialState::Complete, {1.0}), bfhpo::UserError);
  CHECK(fs::file_size(scratch.journal()) == 0);
  CHECK(fs::file_size(moved) == size);
  fs::remove(scratch.journal());
  fs::rename(moved, scratch.journal());  // put back: writing works again
  CHECK(journal.set_trial_state_values(trial, TrialState::Complete, {1.0}));
}

TEST_CASE("a claimed WAITING trial's attributes are written one key a record, as Optuna's reader asserts") {
  ScratchDir scratch("claim_attrs");
  const std::string waiting =
      R"({"op_code": 4, "worker_id": "w", "study_id": 0, "state": 4, "datetime_start": null})";
  scratch.write(std::string(kStudyLine) + "\n" + waiting + "\n");
  JournalStorage journal(scratch.journal());
  const nlohmann::json attrs = {{"a", 1}, {"b", "two"}, {"c", {{"x", 3}}}};
  const auto claimed = journal.claim_waiting_trial(0, [](const std::vector<FrozenTrial>&) { return true; }, attrs);
  REQUIRE(claimed == 0);
  std::istringstream lines(scratch.text());
  std::string line;
  nlohmann::json seen = nlohmann::json::object();
  while (std::getline(lines, line)) {
    const auto log = nlohmann::json::parse(line);
    if (!log.contains("system_attr")) continue;
    CHECK(log["system_attr"].size() == 1);
    seen.update(log["system_attr"]);
  }
  CHECK(seen == attrs);
  CHECK(JournalStorage(scratch.journal()).trial(0).system_attrs == attrs);
  CHECK(JournalStorage(scratch.journal()).trial(0).state == TrialState::Running);
}
