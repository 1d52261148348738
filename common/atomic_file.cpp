#include "common/atomic_file.hpp"

#include "common/user_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace bfhpo {
namespace {

namespace fs = std::filesystem;

UserError write_error(const fs::path& file, const std::string& what, int error) {
  const bool full = error == ENOSPC || error == EFBIG || error == EDQUOT;
  return UserError::at(file.string(), "", "cannot " + what + " (" + std::strerror(error) + ")",
                       full ? "free disk space (or raise the file-size limit) and run the command again"
                            : "check that the folder exists and is writable");
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISREG(mode)) return "a file";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "neither a file nor a folder";
}

// 0, or the errno of the write that failed (a write of 0 bytes: the disk is full).
int write_all(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// Where a path leads once its symlinks are followed, one link at a time (a
// relative link from its own folder, as the kernel does). A link in /proc
// (/dev/stdout leads to /proc/self/fd/1) names a process's descriptor: its
// text ("pipe:[123]") is no path, so it is where the walk stops.
struct Destination {
  fs::path path;
  bool descriptor = false;
};

Destination follow_links(const fs::path& file) {
  constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)
  Destination destination{file};
  for (int links = 0;; ++links) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(destination.path, error))) return destination;
    if (links == kMaxLinks) throw write_error(file, "follow its symbolic links", ELOOP);
    const fs::path folder = fs::canonical(fs::absolute(destination.path).parent_path(), error);
    if (folder.string().rfind("/proc/", 0) == 0) {
      destination.descriptor = true;
      return destination;
    }
    const fs::path target = fs::read_symlink(destination.path, error);
    if (error) throw write_error(file, "read the symbolic link " + destination.path.string(), error.value());
    destination.path = target.is_absolute() ? target : destination.path.parent_path() / target;
  }
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(const fs::path& file) : file_(file) {
  const Destination destination = follow_links(file);
  struct stat status {};
  std::optional<mode_t> mode;
  if (::stat(destination.path.c_str(), &status) != 0) {
    if (errno != ENOENT || destination.descriptor) throw write_error(file, "open", errno);
  } else if (S_ISREG(status.st_mode) && !destination.descriptor) {
    mode = status.st_mode & 07777;
  } else if (S_ISREG(status.st_mode) || S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode)) {
    fd_ = ::open(destination.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) throw write_error(file, "open", errno);
    return;
  } else {
    throw UserError::at(file.string(), "", "is " + kind_of(status.st_mode) + ", not a file to write",
                        "give the path of a file (a new one, or one to replace)");
  }
  target_ = destination.path;
  temporary_ = destination.path.string() + ".tmp-" + std::to_string(::getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw fail("create " + temporary_.string(), errno);
  if (mode && ::fchmod(fd_, *mode) != 0) throw fail("keep the file's permissions", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::append(std::string_view bytes) {
  if (const int error = write_all(fd_, bytes)) throw fail("write", error);
}

void AtomicFileWriter::commit() {
  if (!temporary_.empty() && ::fsync(fd_) != 0) throw fail("flush to disk", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw fail("close", errno);
  if (temporary_.empty()) return;
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) throw fail("rename into place", errno);
  temporary_.clear();
}

UserError AtomicFileWriter::fail(const std::string& what, int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
  return write_error(file_, what, error);
}

void write_file_atomically(const fs::path& file, std::string_view bytes) {
  AtomicFileWriter writer(file);
  writer.append(bytes);
  writer.commit();
}

void create_output_folder(const fs::path& folder) {
  struct stat status {};
  if (::stat(folder.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) return;
    throw UserError::at(folder.string(), "", "is " + kind_of(status.st_mode) + ", not a folder",
                        "give the path of a folder (a new one is created)");
  }
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(folder, error)))
    throw UserError::at(folder.string(), "", "is a symbolic link to a missing folder",
                        "create the folder it points to, or give another path");
  fs::create_directories(folder, error);
  if (error)
    throw UserError::at(folder.string(), "", "cannot create the folder (" + error.message() + ")",
                        "give a path in a folder you can write to");
}

}  // namespace bfhpo
