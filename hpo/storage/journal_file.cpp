#include "hpo/storage/journal_file.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/flock_holder.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bfhpo::hpo {
namespace {

std::string errno_text() { return std::strerror(errno); }

// "process 1234 (bfhpo-train, stopped: `kill -CONT 1234` resumes it)"
std::string holder_in_words(const std::optional<FlockHolder>& holder) {
  if (!holder) return "another process (its pid is not known)";
  const std::string pid = std::to_string(holder->pid);
  std::string text = "process " + pid;
  if (!holder->command.empty() || holder->stopped) {
    text += " (" + holder->command;
    if (holder->stopped) text += std::string(holder->command.empty() ? "" : ", ") + "stopped: `kill -CONT " + pid + "` resumes it";
    text += ")";
  }
  return text;
}

std::uint64_t file_size(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    throw UserError::at(path.string(), "", "cannot stat the journal: " + errno_text(), "check the disk");
  return static_cast<std::uint64_t>(info.st_size);
}

}  // namespace

JournalFile::JournalFile(std::filesystem::path path, StorageAccess access, JournalLockWait lock_wait)
    : path_(std::move(path)), access_(access), lock_wait_(lock_wait), lock_(path_) {
  const bool write = access_ == StorageAccess::ReadWrite;
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
  fd_ = write ? ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644)
              : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0)
    throw UserError::at(path_.string(), "", "cannot open the journal: " + errno_text(),
                        write ? "check that the folder exists and is writable"
                              : "check that the journal exists and is readable");
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw UserError::at(path_.string(), "", "the journal is not a regular file (a FIFO, a device or a directory)",
                        "point \"storage\" (or --storage) at a journal file, e.g. study.json.journal");
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

JournalFile::~JournalFile() {
  if (fd_ >= 0) ::close(fd_);
}

JournalFile::Read JournalFile::read_from(std::uint64_t offset,
                                         const std::function<void(std::string_view)>& on_line) const {
  const std::uint64_t size = file_size(fd_, path_);
  Read read;
  read.end = offset;
  if (size <= offset) return read;
  // In chunks, so a long journal is never held in memory at once.
  constexpr std::uint64_t kChunk = 1 << 20;
  std::string& pending = read.tail;  // bytes after the last complete line
  pending.reserve(2 * kChunk);
  std::uint64_t read_at = offset;
  while (read_at < size) {
    const std::size_t old = pending.size();
    pending.resize(old + std::min(kChunk, size - read_at));
    const ssize_t n = ::pread(fd_, pending.data() + old, pending.size() - old, static_cast<off_t>(read_at));
    if (n < 0 && errno == EINTR) {
      pending.resize(old);
      continue;
    }
    if (n < 0) throw UserError::at(path_.string(), "", "cannot read the journal: " + errno_text(), "check the disk");
    pending.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;  // the file shrank under us: read what is there
    read_at += static_cast<std::uint64_t>(n);
    std::size_t start = 0;
    for (std::size_t end = pending.find('\n', old); end != std::string::npos; end = pending.find('\n', start)) {
      on_line(std::string_view(pending.data() + start, end - start));
      read.end += end - start + 1;
      start = end + 1;
    }
    pending.erase(0, start);
  }
  return read;
}

JournalFile::WriteLock::WriteLock(const JournalFile& file) : file_(file) {
  if (file_.access_ != StorageAccess::ReadWrite) throw std::logic_error("a write through a read-only journal");
  file_.wait_for_flock();
  try {
    file_.lock_.acquire();
  } catch (...) {
    ::flock(file_.fd_, LOCK_UN);
    throw;
  }
}

void JournalFile::wait_for_flock() const {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto pause = std::chrono::milliseconds(1);
  bool noticed = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK)
      throw UserError::at(path_.string(), "", "cannot lock the journal: " + errno_text(), "check the disk");
    const double waited_s = std::chrono::duration<double>(Clock::now() - started).count();
    if (waited_s >= lock_wait_.timeout_s)
      throw UserError::at(path_.string(), "",
                          holder_in_words(flock_holder(fd_)) + " has held the journal's lock for " +
                              std::to_string(static_cast<long>(waited_s)) + " s; nothing was written",
                          "resume or end that process, then run this again");
    if (!noticed && waited_s >= lock_wait_.notice_s) {
      std::cerr << "bfhpo: waiting for the journal " << path_.string() << ": " << holder_in_words(flock_holder(fd_))
                << " holds its lock (giving up after " << static_cast<long>(lock_wait_.timeout_s) << " s)\n";
      noticed = true;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

JournalFile::WriteLock::~WriteLock() {
  file_.lock_.release();
  ::flock(file_.fd_, LOCK_UN);
}

void JournalFile::check_still_at_path() const {
  struct stat opened {}, named {};
  if (::fstat(fd_, &opened) != 0)
    throw UserError::at(path_.string(), "", "cannot stat the journal: " + errno_text(), "check the disk");
  if (::stat(path_.c_str(), &named) != 0 || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino)
    throw UserError::at(path_.string(), "",
                        "the journal was renamed, deleted or replaced while this process used it; "
                        "nothing more was written to it",
                        "put the journal back at this path (or point \"storage\" at it) and run again");
}

void JournalFile::append(const std::string& lines, std::uint64_t applied_end, bool applied_ends_with_newline) {
  check_still_at_path();
  const std::uint64_t size = file_size(fd_, path_);
  if (size > applied_end) {
    std::string tail(size - applied_end, '\0');
    const ssize_t n = ::pread(fd_, tail.data(), tail.size(), static_cast<off_t>(applied_end));
    if (n != static_cast<ssize_t>(tail.size()) || tail.find('\n') != std::string::npos)
      throw UserError::at(path_.string(), "",
                          "a line was appended while this process held the journal's lock: a writer that ignores "
                          "the lock (\"<journal>.lock\") shares this journal; nothing was written",
                          "run only writers that take the lock: bfhpo, or Optuna's JournalFileStorage");
    // A torn write: no writer holds the lock, so its writer is dead.
    if (::ftruncate(fd_, static_cast<off_t>(applied_end)) != 0)
      throw UserError::at(path_.string(), "", "cannot repair an incomplete last line: " + errno_text(),
                          "check the journal is writable");
  }
  const std::string text = applied_ends_with_newline ? lines : "\n" + lines;
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = errno_text();
      // Drop the partial line now; if that fails too, the next writer repairs it.
      (void)!::ftruncate(fd_, static_cast<off_t>(applied_end));
      throw UserError::at(path_.string(), "", "cannot append to the journal: " + reason,
                          "free disk space; nothing recorded so far was lost");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0)
    throw UserError::at(path_.string(), "", "fsync of the journal failed: " + errno_text(), "check the disk");
}

}  // namespace bfhpo::hpo
