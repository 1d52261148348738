// Who holds a flock on a file, for a writer that waits for it to say whom it
// waits for: the kernel lists every lock in /proc/locks by pid and
// device:inode. The pid is the process that took the lock (a child that
// inherited the descriptor is not named). None when /proc is absent or
// lists no flock on the file.
#pragma once

#include <optional>
#include <string>

namespace bfhpo::hpo {

struct FlockHolder {
  long pid = 0;
  std::string command;  // /proc/PID/comm, "" if unreadable
  bool stopped = false;  // SIGSTOP / Ctrl-Z (state T): it runs again after kill -CONT
};

// The holder of a flock on the file open at `fd`.
std::optional<FlockHolder> flock_holder(int fd);

}  // namespace bfhpo::hpo
