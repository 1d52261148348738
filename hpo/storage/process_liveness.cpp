#include "hpo/storage/process_liveness.hpp"

#include <cerrno>

#include <signal.h>
#include <unistd.h>

namespace bfhpo::hpo {

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

Liveness process_liveness(const std::string& host, long pid) {
  if (host != this_host() || pid <= 0) return Liveness::Unknown;
  if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) return Liveness::Alive;
  return errno == ESRCH ? Liveness::Gone : Liveness::Unknown;
}

}  // namespace bfhpo::hpo
