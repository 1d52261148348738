// The one way bfhpo reads a whole file a user names as input (a study or
// params file through config_reader, a response file): a regular file (or a
// symlink to one) or a pipe (`--params <(...)`, `/dev/stdin` fed by a pipe),
// of at most `max_bytes`. A device such as /dev/zero would never end, a
// directory cannot be read: each is a UserError naming the file, its role and
// the fix, raised before any byte is read; a file or pipe longer than
// `max_bytes` is one too. The file is opened without blocking, so a FIFO that
// no process writes reads as empty at once instead of waiting for a writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace bfhpo {

struct InputFile {
  std::string role;      // in messages: "study file", "response file"
  std::string expected;  // the fix's "give ...": "the path of a JSON file"
  std::uint64_t max_bytes = 0;
};

std::string read_input_file(const std::filesystem::path& file, const InputFile& kind);

}  // namespace bfhpo
