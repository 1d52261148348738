#include "hpo/storage/process_liveness.hpp"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>

#include <signal.h>
#include <unistd.h>

namespace bfhpo::hpo {

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::optional<unsigned long long> process_start_time(long pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Field 2 is the command in parentheses, which may itself hold spaces and ')'.
  const auto command_end = stat.rfind(')');
  if (command_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(command_end + 1));
  std::string field;
  for (int number = 3; number < 22; ++number)
    if (!(fields >> field)) return std::nullopt;
  unsigned long long start = 0;
  if (!(fields >> start)) return std::nullopt;
  return start;
}

Liveness process_liveness(const std::string& host, long pid, std::optional<unsigned long long> start_time) {
  if (host != this_host() || pid <= 0) return Liveness::Unknown;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return errno == ESRCH ? Liveness::Gone : Liveness::Unknown;
  if (start_time) {
    const auto now_running = process_start_time(pid);
    if (now_running && *now_running != *start_time) return Liveness::Gone;  // the pid was reused
  }
  return Liveness::Alive;
}

}  // namespace bfhpo::hpo
