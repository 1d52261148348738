// A fresh folder under the system's temporary directory for one test,
// named after the test and this process, removed when the test ends.
#pragma once

#include <filesystem>
#include <string>

#include <unistd.h>

struct ScratchFolder {
  std::filesystem::path dir;
  ScratchFolder(const std::string& test, const std::string& tag)
      : dir(std::filesystem::temp_directory_path() / ("bfhpo_" + test + "_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchFolder() { std::filesystem::remove_all(dir); }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};
