#include "cli/training_exec.hpp"

#include "common/user_error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace bfhpo::cli {

std::string training_executable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw UserError("bfhpo: cannot read /proc/self/exe (" + error.message() + "). Fix: run bfhpo on Linux with /proc mounted");
  return (self.parent_path() / "bfhpo-train").string();
}

void exec_training(char** argv) {
  const std::string path = training_executable();
  argv[0] = const_cast<char*>(path.c_str());
  execv(path.c_str(), argv);
  throw UserError("bfhpo: cannot run " + path + " (" + std::strerror(errno) +
                  "). Fix: build it (scripts/build) or install it beside bfhpo");
}

}  // namespace bfhpo::cli
