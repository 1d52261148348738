#include "hpo/storage/flock_holder.hpp"

#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace bfhpo::hpo {
namespace {

// "fe:00:10952880": the device as /proc/locks prints it (major:minor in hex), then the inode.
std::string device_and_inode(const struct stat& info) {
  std::ostringstream text;
  text << std::hex;
  text.width(2);
  text.fill('0');
  text << major(info.st_dev) << ':';
  text.width(2);
  text << minor(info.st_dev) << ':' << std::dec << info.st_ino;
  return text.str();
}

}  // namespace

std::optional<FlockHolder> flock_holder(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::nullopt;
  const std::string file = device_and_inode(info);
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    // "1: FLOCK  ADVISORY  WRITE 18332 fe:00:10952880 0 EOF"; waiters read "1: -> FLOCK ...".
    std::istringstream fields(line);
    std::string number, kind, mode, access, where;
    long pid = 0;
    if (!(fields >> number >> kind >> mode >> access >> pid >> where) || kind != "FLOCK" || where != file) continue;
    FlockHolder holder;
    holder.pid = pid;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::getline(comm, holder.command);
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string stat_line;
    std::getline(stat, stat_line);
    const auto state_at = stat_line.rfind(") ");  // the command may hold spaces and parentheses
    holder.stopped = state_at != std::string::npos && state_at + 2 < stat_line.size() && stat_line[state_at + 2] == 'T';
    return holder;
  }
  return std::nullopt;
}

}  // namespace bfhpo::hpo
