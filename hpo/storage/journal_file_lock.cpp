#include "hpo/storage/journal_file_lock.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/process_liveness.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bfhpo::hpo {
namespace {

using Clock = std::chrono::steady_clock;

std::string unique_suffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return text;
}

// A lock this writer format recorded on this host whose process is gone.
bool held_by_dead_bfhpo(const std::filesystem::path& lock) {
  std::ifstream in(lock);
  std::string tag, host;
  long pid = 0;
  if (!(in >> tag >> host >> pid) || tag != "bfhpo") return false;
  std::optional<unsigned long long> start_time;  // absent in locks of bfhpo before pid-reuse detection
  if (unsigned long long start = 0; in >> start) start_time = start;
  return process_liveness(host, pid, start_time) == Liveness::Gone;
}

bool same_time(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

JournalFileLock::JournalFileLock(const std::filesystem::path& journal, double grace_s)
    : lock_path_(journal.string() + ".lock"), grace_s_(grace_s) {}

void JournalFileLock::acquire() {
  const auto start_time = process_start_time(::getpid());
  const std::string record = "bfhpo " + this_host() + " " + std::to_string(::getpid()) +
                             (start_time ? " " + std::to_string(*start_time) : std::string()) + "\n";
  auto pause = std::chrono::microseconds(500);
  const auto started = Clock::now();
  auto last_warning = started;
  ino_t watched = 0;
  timespec watched_mtime{};
  auto unchanged_since = started;
  while (true) {
    const int fd = ::open(lock_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      struct stat info {};
      (void)!::write(fd, record.data(), record.size());
      ::fstat(fd, &info);
      ::close(fd);
      held_ = info.st_ino;
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EEXIST)
      throw UserError::at(lock_path_.string(), "", std::string("cannot create the journal's lock file: ") + std::strerror(errno),
                          "the journal's folder must be writable for writers (Optuna needs the same)");
    struct stat info {};
    if (::lstat(lock_path_.c_str(), &info) != 0) continue;  // released meanwhile
    const auto now = Clock::now();
    if (info.st_ino != watched || !same_time(info.st_mtim, watched_mtime)) {
      watched = info.st_ino;
      watched_mtime = info.st_mtim;
      unchanged_since = now;
    }
    const bool dead = S_ISREG(info.st_mode) && held_by_dead_bfhpo(lock_path_);
    const bool stale = std::chrono::duration<double>(now - unchanged_since).count() > grace_s_;
    if (dead || stale) {
      std::cerr << "bfhpo: warning: breaking the journal lock " << lock_path_.string()
                << (dead ? " (its bfhpo process is gone)" : " (unchanged for longer than the grace period)") << "\n";
      break_stale(watched);
      pause = std::chrono::microseconds(500);
      continue;
    }
    if (now - last_warning > std::chrono::seconds(10)) {
      std::cerr << "bfhpo: waiting for the journal lock " << lock_path_.string() << " for "
                << std::chrono::duration_cast<std::chrono::seconds>(now - started).count() << " s\n";
      last_warning = now;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(50000));
  }
}

void JournalFileLock::break_stale(ino_t watched) {
  const std::string aside = lock_path_.string() + unique_suffix() + ".rename";
  if (::rename(lock_path_.c_str(), aside.c_str()) != 0) return;  // someone else released or broke it
  struct stat info {};
  if (::lstat(aside.c_str(), &info) == 0 && info.st_ino != watched) {
    // A fresh lock taken after the stale one went: give it back unless the
    // name is taken again (its holder then finds its lock gone when releasing).
    if (::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, lock_path_.c_str(), RENAME_NOREPLACE) == 0) return;
  }
  ::unlink(aside.c_str());
}

void JournalFileLock::release() {
  const ino_t held = held_;
  held_ = 0;
  struct stat info {};
  if (::lstat(lock_path_.c_str(), &info) != 0 || info.st_ino != held) {
    std::cerr << "bfhpo: warning: the journal lock " << lock_path_.string()
              << " was broken by another process while this one held it\n";
    return;
  }
  const std::string aside = lock_path_.string() + unique_suffix() + ".rename";
  if (::rename(lock_path_.c_str(), aside.c_str()) == 0) ::unlink(aside.c_str());
}

}  // namespace bfhpo::hpo
