// The journal writers' lock, as Optuna 3.1 to 5.0 take it, so bfhpo and
// Optuna writers exclude each other: the lock is the directory entry
// "<journal>.lock", created atomically. Optuna's JournalFileSymlinkLock makes
// it a symlink, its JournalFileOpenLock a file opened with O_CREAT|O_EXCL;
// either one makes the other's creation fail, so holding that entry excludes
// both protocols. bfhpo creates it with O_EXCL (the open lock) and writes
// "bfhpo <host> <pid> <start time>" into it (process_liveness.hpp; older
// bfhpo wrote no start time, and such locks are still read). Release is Optuna's: rename the entry to
// "<journal>.lock<uuid>.rename", then unlink that.
//
// A lock left by a dead holder: one bfhpo recorded on this host whose process
// is gone (or whose pid now runs a process started at another time) is broken at once; any other (Optuna's, or from another host) is
// broken once its entry has not changed for `grace_s` seconds as this process
// watches it, Optuna 5's rule (30 s; Optuna 3.1 never breaks a lock). Breaking
// is Optuna's release; if the entry renamed turns out to be a fresh lock and
// not the stale one watched, it is put back.
#pragma once

#include <filesystem>
#include <string>

#include <sys/types.h>

namespace bfhpo::hpo {

class JournalFileLock {
 public:
  static constexpr double kDefaultGrace_s = 30.0;

  explicit JournalFileLock(const std::filesystem::path& journal, double grace_s = kDefaultGrace_s);

  const std::filesystem::path& lock_path() const { return lock_path_; }
  // Blocks until this process holds the lock. UserError naming the lock file
  // when it cannot be created at all (a read-only folder).
  void acquire();
  void release();

 private:
  void break_stale(ino_t watched);

  std::filesystem::path lock_path_;
  double grace_s_;
  ino_t held_ = 0;  // inode of the entry this process created, while held
};

}  // namespace bfhpo::hpo
