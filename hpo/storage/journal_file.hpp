// The journal file itself, as Optuna's JournalFileBackend is for its
// JournalStorage: opens the file, reads complete lines from a byte offset,
// and appends whole lines under the writers' lock. It knows nothing of what
// a line means; JournalReplay does.
//
// - Reading needs no lock and no write permission: a line is complete once
//   its '\n' is in the file; the bytes after the last '\n' are handed back as
//   the tail, for the caller to judge (a complete record whose newline is
//   missing, or a torn write).
// - The write lock is JournalFileLock ("<journal>.lock", Optuna's protocols)
//   taken under a flock of the journal, which queues bfhpo writers in the
//   kernel and frees them when one dies; a writer held up by a stopped one
//   says so and gives up after a while (JournalLockWait).
// - append() runs under the lock, so no writer that honours it can be
//   writing: bytes after the caller's offset with no '\n' are a torn write
//   of a dead writer and are dropped; a line ending after the caller's
//   offset is never touched (UserError: the caller must read it first).
//   When the applied bytes end without '\n' (a complete last record written
//   without one), a '\n' is written before the new lines, never a truncation.
// - Every write first checks the path still names the file this object
//   opened: a journal renamed or deleted under a running worker is a
//   UserError, never results written where nobody finds them.
#pragma once

#include "hpo/storage/journal_file_lock.hpp"
#include "hpo/storage/storage.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace bfhpo::hpo {

// How a writer waits for another process's flock of the journal: after
// notice_s it says once which process holds it (flock_holder.hpp) and that
// it waits; after timeout_s it gives up with a UserError naming that process.
struct JournalLockWait {
  double notice_s = 2.0;
  double timeout_s = 300.0;
};

class JournalFile {
 public:
  // Opens the file; ReadWrite creates it when absent, ReadOnly requires it.
  // UserError naming the path when it cannot be opened or is not a regular
  // file (a FIFO, a device, a directory): a journal is never read from those.
  JournalFile(std::filesystem::path path, StorageAccess access, JournalLockWait lock_wait = {});
  ~JournalFile();
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  StorageAccess access() const { return access_; }

  struct Read {
    std::uint64_t end = 0;  // offset just past the last complete line read
    std::string tail;       // bytes after it, up to the end of the file as read
  };
  // Calls on_line(line without '\n') for each complete line from `offset`.
  Read read_from(std::uint64_t offset, const std::function<void(std::string_view)>& on_line) const;

  // Held while a writer checks and appends; excludes bfhpo and Optuna writers.
  class WriteLock {
   public:
    explicit WriteLock(const JournalFile& file);
    ~WriteLock();
    WriteLock(const WriteLock&) = delete;
    WriteLock& operator=(const WriteLock&) = delete;

   private:
    const JournalFile& file_;
  };

  // Under a WriteLock: appends `lines` (each ending in '\n') after the bytes
  // the caller has read up to `applied_end`; `applied_ends_with_newline`
  // says whether those bytes end in '\n' (true for an empty file). fsyncs.
  void append(const std::string& lines, std::uint64_t applied_end, bool applied_ends_with_newline);

 private:
  void check_still_at_path() const;
  // Takes the flock of the journal, waiting as lock_wait_ says.
  void wait_for_flock() const;

  std::filesystem::path path_;
  StorageAccess access_;
  JournalLockWait lock_wait_;
  int fd_ = -1;
  mutable JournalFileLock lock_;
};

}  // namespace bfhpo::hpo
