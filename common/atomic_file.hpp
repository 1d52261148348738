// The one place bfhpo writes an output: a file the user named (--out, -o) or
// one it keeps. Readers see the old content or the new, never a part, and a
// path never loses what it names:
//  - a regular file, or a name not yet taken: the bytes go to a temporary
//    file beside it, are flushed to disk (fsync), and the temporary is renamed
//    over it (an existing file keeps its permissions);
//  - a symlink is followed: the file it leads to is replaced as above, the
//    link stays (a dangling link's target is created);
//  - a character device or a FIFO (/dev/null, a named pipe, /dev/stdout on a
//    terminal or a pipe), and a descriptor of this process named through
//    /proc (/dev/stdout, /dev/fd/N when they lead to a file), are written
//    through: opened and written in place, appended to a file;
//  - a folder, a block device or a socket is refused.
// A failure (a full disk, a file-size limit, a read-only folder) removes the
// temporary, leaves the target byte-identical, and is a UserError naming the
// file and the system's reason.
#pragma once

#include "common/user_error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace bfhpo {

void write_file_atomically(const std::filesystem::path& file, std::string_view bytes);

// The same output written in pieces, so an output larger than memory needs
// no buffer: the pieces go to the temporary (or through, for a device or a
// FIFO) and commit() puts the file in place. Destroyed before commit() (an
// error, an exception elsewhere), the temporary is removed and the target is
// as it was. Each failure is the UserError write_file_atomically gives.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::filesystem::path& file);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void append(std::string_view bytes);
  void commit();

 private:
  UserError fail(const std::string& what, int error);

  std::filesystem::path file_;       // as the user named it, for messages
  std::filesystem::path target_;     // where its links lead; empty when written through
  std::filesystem::path temporary_;  // empty when written through or once renamed
  int fd_ = -1;
};

// The folder a command writes its files into (train's --out): created with
// its parents when missing. A path that names anything but a folder (or a
// symlink to one) is a UserError, and nothing is created.
void create_output_folder(const std::filesystem::path& folder);

}  // namespace bfhpo
