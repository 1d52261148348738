#include "common/atomic_file.hpp"

#include "common/user_error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace bfhpo {

void write_file_atomically(const std::filesystem::path& file, std::string_view bytes) {
  const std::filesystem::path temporary = file.string() + ".tmp-" + std::to_string(::getpid());
  const auto fail = [&](const std::string& what, int error) {
    ::unlink(temporary.c_str());
    return UserError::at(file.string(), "", "cannot " + what + " (" + std::strerror(error) + ")",
                         error == ENOSPC || error == EFBIG || error == EDQUOT
                             ? "free disk space (or raise the file-size limit) and run the command again"
                             : "check that the folder exists and is writable");
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw fail("create " + temporary.filename().string(), errno);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      throw fail("write", error);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    throw fail("flush to disk", error);
  }
  if (::close(fd) != 0) throw fail("close", errno);
  if (::rename(temporary.c_str(), file.c_str()) != 0) throw fail("rename into place", errno);
}

}  // namespace bfhpo
