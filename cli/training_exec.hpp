// How the front `bfhpo` runs a training verb: it replaces itself (execv) with
// `bfhpo-train`, found beside the running executable (/proc/self/exe), with
// the same arguments. The training process is then the process the user
// started: its exit status, stdout/stderr and signals (Ctrl-C, SIGTERM) are
// the user's directly, with nothing in between to forward them.
#pragma once

#include <string>

namespace bfhpo::cli {

// The path of bfhpo-train: the folder of the running executable + "/bfhpo-train".
std::string training_executable();

// Execs training_executable() with argv[1..]. Returns only by throwing a
// UserError when the exec failed (a missing or unrunnable bfhpo-train).
[[noreturn]] void exec_training(char** argv);

}  // namespace bfhpo::cli
