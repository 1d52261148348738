// Liveness of a recorded worker process on this host, and pid reuse: a pid
// whose process started at another time than recorded is a gone worker.
#include "hpo/storage/process_liveness.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace bfhpo::hpo;

namespace {

// A child process that runs until killed (reaped by the destructor).
struct LiveChild {
  pid_t pid;
  LiveChild() {
    pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~LiveChild() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

}  // namespace

TEST_CASE("a process's start time is /proc/PID/stat field 22: stable, and none for a gone process") {
  const auto mine = process_start_time(::getpid());
  REQUIRE(mine);
  CHECK(process_start_time(::getpid()) == mine);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a few clock ticks (100 Hz) later
  LiveChild child;
  const auto childs = process_start_time(child.pid);
  REQUIRE(childs);
  CHECK(*childs > *mine);
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  CHECK_FALSE(process_start_time(gone));
  CHECK_FALSE(process_start_time(0));
}

TEST_CASE("a command name with spaces and parentheses does not shift the fields") {
  int go[2], renamed[2];
  REQUIRE(::pipe(go) == 0);
  REQUIRE(::pipe(renamed) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    char byte = 0;
    if (::read(go[0], &byte, 1) != 1) ::_exit(1);
    ::prctl(PR_SET_NAME, "a) (b c 1 2 3");  // /proc/PID/stat then shows "(a) (b c 1 2 3)"
    if (::write(renamed[1], &byte, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  const auto before = process_start_time(child);
  char byte = 1;
  REQUIRE(::write(go[1], &byte, 1) == 1);
  REQUIRE(::read(renamed[0], &byte, 1) == 1);
  std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
  std::string name;
  std::getline(comm, name);
  CHECK(name == "a) (b c 1 2 3");
  CHECK(process_start_time(child) == before);
  CHECK(process_liveness(this_host(), child, before) == Liveness::Alive);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  for (int fd : {go[0], go[1], renamed[0], renamed[1]}) ::close(fd);
}

TEST_CASE("liveness: the recorded start time tells a reused pid from its first process") {
  LiveChild child;
  const auto start = process_start_time(child.pid);
  REQUIRE(start);
  CHECK(process_liveness(this_host(), child.pid, start) == Liveness::Alive);
  CHECK(process_liveness(this_host(), child.pid, *start + 1) == Liveness::Gone);  // the pid runs another process
  CHECK(process_liveness(this_host(), child.pid) == Liveness::Alive);  // an older record: judged by the pid alone
  CHECK(process_liveness("elsewhere.invalid", child.pid, *start + 1) == Liveness::Unknown);
}
