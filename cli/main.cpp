// `bfhpo`, the front executable: LibTorch-free. Runs the study verbs itself
// and execs `bfhpo-train` for the training verbs (cli/training_exec.hpp).
#include "cli/command.hpp"
#include "cli/training_exec.hpp"

#include <iostream>

namespace {

const std::vector<bfhpo::cli::VerbEntry>& front_verbs() {
  using namespace bfhpo::cli;
  static const std::vector<VerbEntry> entries{
      {"ask", run_ask},       {"tell", run_tell},     {"enqueue", run_enqueue}, {"requeue", run_requeue},
      {"status", run_status}, {"report", run_report}, {"export", run_export},
      {"launch", run_launch}};
  return entries;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bfhpo::cli;
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const Verb* verb = find_verb(argv[1]);
  if (!verb) {
    std::cerr << "error: unknown verb '" << argv[1] << "'. Fix: use one of the verbs below\n";
    print_usage();
    return 2;
  }
  // The training verbs' arguments are checked here too, so a typo costs no LibTorch load.
  return run_verb(*verb, std::vector<std::string>(argv + 2, argv + argc), [&](const VerbArgs& args) {
    if (verb->side == Side::Training) exec_training(argv);
    return runner_of(front_verbs(), verb->name)(args);
  });
}
