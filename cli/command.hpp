// The verbs' entry points, one file each. A verb takes its parsed arguments
// (cli/verbs.hpp declares its options), calls one function of the library,
// prints, and returns the exit status; UserErrors propagate to run_verb.
// The study verbs run in the front executable `bfhpo` (no LibTorch), the
// training verbs in `bfhpo-train`.
#pragma once

#include "cli/verbs.hpp"
#include "hpo/study_spec.hpp"

#include <boost/program_options.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::cli {

using VerbArgs = boost::program_options::variables_map;
using VerbRun = int (*)(const VerbArgs& args);

struct VerbEntry {
  const char* name;
  VerbRun run;
};

// Study verbs (front).
int run_ask(const VerbArgs& args);
int run_tell(const VerbArgs& args);
int run_enqueue(const VerbArgs& args);
int run_requeue(const VerbArgs& args);
int run_status(const VerbArgs& args);
int run_report(const VerbArgs& args);
int run_export(const VerbArgs& args);
int run_launch(const VerbArgs& args);
// Training verbs (bfhpo-train).
int run_train(const VerbArgs& args);
int run_infer(const VerbArgs& args);
int run_optimize(const VerbArgs& args);
int run_estimate(const VerbArgs& args);
int run_probe(const VerbArgs& args);
int run_init(const VerbArgs& args);

// The study named by the verb's STUDY.json argument, with --storage applied;
// a training study's objectives and constraints name metrics its trials report.
hpo::StudySpec load_study(const VerbArgs& args);
// --storage when given.
std::optional<std::string> storage_override(const VerbArgs& args);

// The entry of `entries` named `name`; a verb of the table without one is a bug (std::logic_error).
VerbRun runner_of(const std::vector<VerbEntry>& entries, const std::string& name);

// Parses `args` for `verb`, prints its help or runs `run`; a UserError is
// printed ("error: ...") and gives 2, as does any other std::exception (its
// first line: never a backtrace or an abort). Returns the exit status of the process.
int run_verb(const Verb& verb, const std::vector<std::string>& args, const std::function<int(const VerbArgs&)>& run);

}  // namespace bfhpo::cli
