#include "common/input_file.hpp"

#include "common/user_error.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace bfhpo {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (a named pipe), which may wait for a writer forever";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_in_words(std::uint64_t bytes) {
  constexpr std::uint64_t kMb = 1024 * 1024;
  return bytes < kMb ? std::to_string(bytes) + " bytes" : std::to_string(bytes / kMb) + " MB";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_input_file(const std::filesystem::path& file, const InputFile& kind) {
  const std::string name = file.string();
  const Descriptor fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    throw UserError::at(name, "", "cannot open the " + kind.role + " (" + std::strerror(error) + ")",
                        error == ENOENT ? "check the path" : "check the file's permissions");
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    throw UserError::at(name, "", "cannot read the " + kind.role + " (" + std::strerror(errno) + ")",
                        "check the file and the disk");
  struct statfs filesystem {};
  const bool anonymous_pipe =
      S_ISFIFO(info.st_mode) && ::fstatfs(fd.get(), &filesystem) == 0 && filesystem.f_type == PIPEFS_MAGIC;
  if (!S_ISREG(info.st_mode) && !anonymous_pipe)
    throw UserError::at(name, "", "the " + kind.role + " is " + kind_of(info.st_mode), "give " + kind.expected);
  // A pipe is read to its end, each read waiting for its writer.
  if (anonymous_pipe) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (static_cast<std::uint64_t>(info.st_size) > kind.max_bytes)
    throw UserError::at(name, "",
                        "the " + kind.role + " holds " + size_in_words(static_cast<std::uint64_t>(info.st_size)) +
                            ", more than the " + size_in_words(kind.max_bytes) + " bfhpo reads",
                        "give " + kind.expected + " of at most " + size_in_words(kind.max_bytes));
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw UserError::at(name, "", "cannot read the " + kind.role + " (" + std::strerror(errno) + ")",
                          "check the file and the disk");
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kind.max_bytes)  // a pipe, or a file that grew while being read
      throw UserError::at(name, "", "the " + kind.role + " holds more than the " + size_in_words(kind.max_bytes) +
                                        " bfhpo reads",
                          "give " + kind.expected + " of at most " + size_in_words(kind.max_bytes));
  }
  return text;
}

}  // namespace bfhpo
