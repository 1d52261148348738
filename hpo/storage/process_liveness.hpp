// Whether a process recorded by host name and pid still runs. Only a process
// on this host can be checked; elsewhere the answer is Unknown and callers
// fall back to a heartbeat or a lock's age.
//
// A pid is reused once its process is gone, so a record also keeps the
// process's start time (process_start_time): a pid that now runs a process
// started at another time is Gone. Records without a start time (older
// bfhpo versions) are judged by the pid alone.
#pragma once

#include <optional>
#include <string>

namespace bfhpo::hpo {

std::string this_host();

// When process `pid` of this host started, in clock ticks since boot
// (/proc/PID/stat field 22); none when it cannot be read (no such process, no /proc).
std::optional<unsigned long long> process_start_time(long pid);

enum class Liveness { Alive, Gone, Unknown };
Liveness process_liveness(const std::string& host, long pid, std::optional<unsigned long long> start_time = {});

}  // namespace bfhpo::hpo
