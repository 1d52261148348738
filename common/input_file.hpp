// The one way bfhpo reads a whole file a user names as input (a study or
// params file through config_reader, a response file): a regular file (or a
// symlink to one) or an anonymous pipe (`--params <(...)`, `/dev/stdin` fed
// by a pipe), of at most `max_bytes`. A device such as /dev/zero would never
// end, a named FIFO (mkfifo) waits for a writer or for its writer to close
// it, perhaps forever, a directory cannot be read: each is a UserError naming
// the file, its role and the fix, raised before any byte is read (the file is
// opened without blocking, so opening a FIFO does not wait either); a file or
// pipe longer than `max_bytes` is one too.
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
