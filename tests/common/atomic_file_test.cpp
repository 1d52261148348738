#include "common/atomic_file.hpp"

#include "common/user_error.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;
using bfhpo::create_output_folder;
using bfhpo::write_file_atomically;

namespace {

struct ScratchFolder {
  fs::path path;
  ScratchFolder() {
    std::string name = (fs::temp_directory_path() / "bfhpo-atomic-file-XXXXXX").string();
    path = ::mkdtemp(name.data());
  }
  ~ScratchFolder() { fs::remove_all(path); }
};

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_plain(const fs::path& file, const std::string& bytes) { std::ofstream(file, std::ios::binary) << bytes; }

// The files a write left in a folder, temporaries included.
std::size_t entries(const fs::path& folder) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

std::string message_of(const fs::path& file, const std::string& bytes) {
  try {
    write_file_atomically(file, bytes);
  } catch (const bfhpo::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a file is created, or replaced keeping its permissions") {
  ScratchFolder scratch;
  const fs::path file = scratch.path / "out.csv";
  write_file_atomically(file, "first\n");
  CHECK(read_file(file) == "first\n");
  ::chmod(file.c_str(), 0600);
  write_file_atomically(file, "second\n");
  CHECK(read_file(file) == "second\n");
  struct stat status {};
  REQUIRE(::stat(file.c_str(), &status) == 0);
  CHECK((status.st_mode & 07777) == 0600);
  CHECK(entries(scratch.path) == 1);
}

TEST_CASE("a symlink to a file: the file it points to is replaced, the link stays") {
  ScratchFolder scratch;
  fs::create_directory(scratch.path / "real");
  write_plain(scratch.path / "real" / "out.csv", "old\n");
  fs::create_directory(scratch.path / "links");
  fs::create_symlink("../real/out.csv", scratch.path / "links" / "out.csv");  // relative to the link's folder
  write_file_atomically(scratch.path / "links" / "out.csv", "new\n");
  CHECK(fs::is_symlink(scratch.path / "links" / "out.csv"));
  CHECK(read_file(scratch.path / "real" / "out.csv") == "new\n");
  CHECK(entries(scratch.path / "links") == 1);
  CHECK(entries(scratch.path / "real") == 1);

  SECTION("a dangling link: the file it names is created") {
    fs::create_symlink(scratch.path / "real" / "missing.csv", scratch.path / "dangling");
    write_file_atomically(scratch.path / "dangling", "made\n");
    CHECK(fs::is_symlink(scratch.path / "dangling"));
    CHECK(read_file(scratch.path / "real" / "missing.csv") == "made\n");
  }
}

TEST_CASE("a FIFO, directly or through a symlink, is written through") {
  ScratchFolder scratch;
  const fs::path fifo = scratch.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_symlink(fifo, scratch.path / "link");
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, so opening to write does not wait
  REQUIRE(reader >= 0);
  write_file_atomically(fifo, "one ");
  write_file_atomically(scratch.path / "link", "two");
  char received[16] = {};
  const ssize_t n = ::read(reader, received, sizeof received - 1);
  ::close(reader);
  CHECK(std::string(received, n > 0 ? n : 0) == "one two");
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  CHECK(fs::is_symlink(scratch.path / "link"));
  CHECK(entries(scratch.path) == 2);
}

TEST_CASE("a character device (a copy of /dev/null) is written through, not replaced") {
  ScratchFolder scratch;
  const fs::path null = scratch.path / "null";
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("mknod needs root: the character device is not checked");
    return;
  }
  fs::create_symlink(null, scratch.path / "link");
  write_file_atomically(null, "discarded");
  write_file_atomically(scratch.path / "link", "discarded");
  CHECK(fs::is_character_file(fs::symlink_status(null)));
  CHECK(fs::is_symlink(scratch.path / "link"));
  CHECK(entries(scratch.path) == 2);
}

TEST_CASE("a descriptor named through /proc (as /dev/stdout is) is appended to, not replaced") {
  ScratchFolder scratch;
  const fs::path file = scratch.path / "stdout.txt";
  write_plain(file, "printed before\n");
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(fd >= 0);
  fs::create_symlink("/dev/fd/" + std::to_string(fd), scratch.path / "link");
  write_file_atomically("/dev/fd/" + std::to_string(fd), "one\n");
  write_file_atomically(scratch.path / "link", "two\n");
  ::close(fd);
  CHECK(read_file(file) == "printed before\none\ntwo\n");
  CHECK(fs::is_symlink(scratch.path / "link"));
  CHECK(entries(scratch.path) == 2);
}

TEST_CASE("a folder is refused, and left as it was") {
  ScratchFolder scratch;
  fs::create_directory(scratch.path / "report");
  fs::create_symlink(scratch.path / "report", scratch.path / "link");
  CHECK_THAT(message_of(scratch.path / "report", "x"), Catch::Contains("is a folder") && Catch::Contains("Fix:"));
  CHECK_THAT(message_of(scratch.path / "link", "x"), Catch::Contains("is a folder"));
  CHECK(fs::is_directory(scratch.path / "report"));
  CHECK(fs::is_empty(scratch.path / "report"));
  CHECK(entries(scratch.path) == 2);
}

TEST_CASE("a write that fails (a file-size limit) leaves the old file byte-identical and no temporary") {
  ScratchFolder scratch;
  const fs::path file = scratch.path / "export.json";
  const std::string old(1000, 'o');
  write_plain(file, old);
  // RLIMIT_FSIZE counts bytes; with SIGXFSZ ignored the write fails with EFBIG instead of killing us.
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  const std::string message = message_of(file, std::string(8192, 'n'));
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, previous_handler);
  CHECK_THAT(message, Catch::Contains(file.string()) && Catch::Contains("File too large") && Catch::Contains("Fix:"));
  CHECK(read_file(file) == old);
  CHECK(entries(scratch.path) == 1);
}

TEST_CASE("an output folder is created when missing, refused when the path is something else") {
  ScratchFolder scratch;
  create_output_folder(scratch.path / "a" / "b");
  CHECK(fs::is_directory(scratch.path / "a" / "b"));
  create_output_folder(scratch.path / "a");  // an existing folder is used as it is
  fs::create_directory_symlink(scratch.path / "a", scratch.path / "link");
  create_output_folder(scratch.path / "link");
  CHECK(fs::is_symlink(scratch.path / "link"));

  write_plain(scratch.path / "weights.pt", "trained");
  try {
    create_output_folder(scratch.path / "weights.pt");
    FAIL("a file was taken for a folder");
  } catch (const bfhpo::UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("weights.pt") && Catch::Contains("is a file, not a folder") &&
                             Catch::Contains("Fix:"));
  }
  CHECK(read_file(scratch.path / "weights.pt") == "trained");
  CHECK_THROWS_AS(create_output_folder(scratch.path / "weights.pt" / "sub"), bfhpo::UserError);
  CHECK(entries(scratch.path) == 3);
}

TEST_CASE("AtomicFileWriter: pieces make the file whole at commit; abandoned, the old file stays and no temporary") {
  ScratchFolder scratch;
  const fs::path file = scratch.path / "out.csv";
  write_plain(file, "old\n");
  {
    bfhpo::AtomicFileWriter writer(file);
    writer.append("a,b\n");
    writer.append("1,2\n");
    CHECK(read_file(file) == "old\n");  // nothing visible before commit
  }
  CHECK(read_file(file) == "old\n");
  CHECK(entries(scratch.path) == 1);
  {
    bfhpo::AtomicFileWriter writer(file);
    writer.append("a,b\n");
    writer.append("1,2\n");
    writer.commit();
  }
  CHECK(read_file(file) == "a,b\n1,2\n");
  CHECK(entries(scratch.path) == 1);
}
