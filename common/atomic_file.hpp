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

#include <filesystem>
#include <string_view>

namespace bfhpo {

void write_file_atomically(const std::filesystem::path& file, std::string_view bytes);

// The folder a command writes its files into (train's --out): created with
// its parents when missing. A path that names anything but a folder (or a
// symlink to one) is a UserError, and nothing is created.
void create_output_folder(const std::filesystem::path& folder);

}  // namespace bfhpo
