// One CLI verb: its name, a one-line summary for `bfhpo --help`, and its entry
// point taking the arguments after the verb. A verb parses, calls one function
// of the library, prints, and returns the exit status; UserErrors propagate
// to main, which prints them and exits 2.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace bfhpo::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& commands();

int run_ask(const std::vector<std::string>& args);
int run_tell(const std::vector<std::string>& args);
int run_enqueue(const std::vector<std::string>& args);
int run_requeue(const std::vector<std::string>& args);
int run_status(const std::vector<std::string>& args);
int run_report(const std::vector<std::string>& args);
int run_export(const std::vector<std::string>& args);
int run_train(const std::vector<std::string>& args);
int run_infer(const std::vector<std::string>& args);
int run_optimize(const std::vector<std::string>& args);
int run_estimate(const std::vector<std::string>& args);
int run_probe(const std::vector<std::string>& args);

// Parses `args` against `options` with STUDY.json as the first positional
// argument. Returns false when --help was printed.
bool parse_verb_args(const std::string& verb, const std::string& usage,
                     boost::program_options::options_description& options,
                     const std::vector<std::string>& args, boost::program_options::variables_map& vm);

}  // namespace bfhpo::cli
