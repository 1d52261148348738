// Whether a process recorded by host name and pid still runs. Only a process
// on this host can be checked; elsewhere the answer is Unknown and callers
// fall back to a heartbeat or a lock's age.
#pragma once

#include <string>

namespace bfhpo::hpo {

std::string this_host();

enum class Liveness { Alive, Gone, Unknown };
Liveness process_liveness(const std::string& host, long pid);

}  // namespace bfhpo::hpo
