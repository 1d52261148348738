// Writing a file so that readers see the old content or the new, never a
// part: the bytes go to a temporary file beside the target, are flushed to
// disk (fsync), and the temporary is renamed over the target. A failure (a
// full disk, a file-size limit, a read-only folder) removes the temporary,
// leaves the target as it was, and is a UserError naming the file and the
// system's reason.
#pragma once

#include <filesystem>
#include <string_view>

namespace bfhpo {

void write_file_atomically(const std::filesystem::path& file, std::string_view bytes);

}  // namespace bfhpo
