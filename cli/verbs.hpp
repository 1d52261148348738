// Every verb of the `bfhpo` command: its name, one-line summary, usage, the
// options it accepts, and which executable runs it. This table is
// LibTorch-free, so the front executable `bfhpo` parses every verb's
// arguments and prints every `--help` without loading LibTorch; it runs the
// study verbs itself and hands the training verbs (Side::Training) to
// `bfhpo-train` beside it by exec (cli/training_exec.hpp).
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::cli {

enum class Side { Front, Training };

struct Verb {
  const char* name;
  const char* summary;
  const char* usage;  // what follows "bfhpo NAME "
  Side side;
  void (*declare_options)(boost::program_options::options_description& options);
  bool takes_study = true;  // STUDY.json is the first positional argument
  const char* instead_of_study = nullptr;  // an option that may stand in for it (infer's --model)
};

const std::vector<Verb>& verbs();
const Verb* find_verb(const std::string& name);

// Parses `args` (the words after the verb) against the verb's options with
// STUDY.json as the first positional argument (when the verb takes one). Prints the verb's help and
// returns nullopt for --help/-h, whatever else the arguments hold. Bad or
// missing arguments are UserErrors.
std::optional<boost::program_options::variables_map> parse_verb_args(const Verb& verb,
                                                                     const std::vector<std::string>& args);

// `bfhpo --help`: the verbs and their summaries.
void print_usage();

}  // namespace bfhpo::cli
