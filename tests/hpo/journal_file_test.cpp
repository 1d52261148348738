#include "common/user_error.hpp"
#include "hpo/storage/journal_file.hpp"
#include "hpo/storage/journal_storage.hpp"
#include "scratch_folder.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace bfhpo::hpo;
using Catch::Contains;

TEST_CASE("a journal path that names a FIFO or a device is refused at once, for readers and writers") {
  ScratchFolder scratch("journal_file", "fifo");
  const auto fifo = scratch.dir / "study.journal";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // Opening a FIFO for reading waits for a writer: a refusal must come without one.
  CHECK_THROWS_WITH(JournalStorage(fifo, StorageAccess::ReadOnly), Contains("not a regular file"));
  CHECK_THROWS_WITH(JournalStorage(fifo, StorageAccess::ReadWrite), Contains("not a regular file"));
  CHECK_THROWS_AS(JournalStorage("/dev/zero", StorageAccess::ReadOnly), bfhpo::UserError);
}

TEST_CASE("a writer held up by another process's flock says which process, then gives up with a UserError") {
  ScratchFolder scratch("journal_file", "flock");
  const auto path = scratch.dir / "study.journal";
  JournalFile file(path, StorageAccess::ReadWrite, JournalLockWait{0.1, 0.5});
  // Another open file description of the journal takes the flock, as a stopped writer holds it.
  const int holder = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(holder >= 0);
  REQUIRE(::flock(holder, LOCK_EX) == 0);
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    JournalFile::WriteLock lock(file);
  } catch (const bfhpo::UserError& e) {
    message = e.what();
  }
  std::cerr.rdbuf(old);
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string pid = std::to_string(::getpid());
  CHECK_THAT(message, Contains("process " + pid) && Contains("has held the journal's lock") && Contains("Fix:"));
  CHECK(waited_s >= 0.5);
  CHECK(waited_s < 5.0);
  CHECK_THAT(err.str(), Contains("waiting for the journal " + path.string() + ": process " + pid));
  ::flock(holder, LOCK_UN);
  JournalFile::WriteLock lock(file);  // free again: taken at once
  ::close(holder);
}
