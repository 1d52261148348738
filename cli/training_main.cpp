// `bfhpo-train`: the training verbs, with LibTorch. Users run them through
// `bfhpo VERB ...`, which execs this executable with the same arguments.
#include "cli/command.hpp"
#include "common/heap_policy.hpp"

#include <iostream>

namespace {

const std::vector<bfhpo::cli::VerbEntry>& training_verbs() {
  using namespace bfhpo::cli;
  static const std::vector<VerbEntry> entries{
      {"optimize", run_optimize}, {"train", run_train}, {"infer", run_infer}, {"estimate", run_estimate},
      {"probe", run_probe}, {"init", run_init}};
  return entries;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bfhpo::cli;
  const Verb* verb = argc < 2 ? nullptr : find_verb(argv[1]);
  if (!verb || verb->side != Side::Training) {
    std::cerr << "error: bfhpo-train runs bfhpo's training verbs. Fix: run `bfhpo " << (argc < 2 ? "--help" : argv[1])
              << " ...` instead\n";
    return 2;
  }
  // optimize asks and trains in a loop; the front's verbs ask once and exit.
  bfhpo::keep_freed_heap_for_reuse();
  return run_verb(*verb, std::vector<std::string>(argv + 2, argv + argc), runner_of(training_verbs(), verb->name));
}
