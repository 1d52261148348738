#include "common/input_file.hpp"
#include "common/user_error.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

using bfhpo::InputFile;
using bfhpo::read_input_file;
using Catch::Contains;

namespace {

const InputFile kStudy{"study file", "the path of a JSON file", 1024};

struct Scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bfhpo_input_file_" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("read_input_file reads a regular file, through a symlink too") {
  Scratch scratch;
  const auto file = scratch.dir / "study.json";
  std::ofstream(file) << "{\"name\": 1}";
  std::filesystem::create_symlink(file, scratch.dir / "link.json");
  CHECK(read_input_file(file, kStudy) == "{\"name\": 1}");
  CHECK(read_input_file(scratch.dir / "link.json", kStudy) == "{\"name\": 1}");
}

// A pipe holding `content` whose writer has closed, named as a shell names `<(...)`: /dev/fd/N.
class FilledPipe {
 public:
  explicit FilledPipe(const std::string& content) {
    REQUIRE(::pipe(ends_) == 0);
    REQUIRE(::write(ends_[1], content.data(), content.size()) == static_cast<ssize_t>(content.size()));
    ::close(ends_[1]);
  }
  ~FilledPipe() { ::close(ends_[0]); }
  std::filesystem::path path() const { return "/dev/fd/" + std::to_string(ends_[0]); }

 private:
  int ends_[2];
};

TEST_CASE("read_input_file reads a pipe to its end, and refuses a FIFO before reading, writer or none") {
  Scratch scratch;
  const auto fifo = scratch.dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // Without a writer, a blocking open of the FIFO would wait forever.
  CHECK_THROWS_WITH(read_input_file(fifo, kStudy), Contains("fifo.json") && Contains("is a FIFO") && Contains("Fix:"));
  // With a writer that never closes it, a read would wait forever.
  const int writer_read_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(writer >= 0);
  CHECK_THROWS_WITH(read_input_file(fifo, kStudy), Contains("is a FIFO"));
  ::close(writer);
  ::close(writer_read_end);
  const FilledPipe pipe("{\"name\": 1}");
  CHECK(read_input_file(pipe.path(), kStudy) == "{\"name\": 1}");
  const FilledPipe long_pipe(std::string(1025, ' '));
  CHECK_THROWS_WITH(read_input_file(long_pipe.path(), kStudy), Contains("holds more than the 1024 bytes") && Contains("Fix:"));
}

TEST_CASE("read_input_file refuses a device, a directory and a file over the limit before reading") {
  Scratch scratch;
  CHECK_THROWS_WITH(read_input_file("/dev/zero", kStudy), Contains("/dev/zero") && Contains("is a device"));
  CHECK_THROWS_WITH(read_input_file(scratch.dir, kStudy), Contains("is a directory"));
  const auto big = scratch.dir / "big.json";
  std::ofstream(big) << std::string(1025, ' ');
  CHECK_THROWS_WITH(read_input_file(big, kStudy), Contains("more than the") && Contains("Fix:"));
  CHECK_THROWS_WITH(read_input_file(scratch.dir / "absent.json", kStudy), Contains("cannot open the study file"));
}
