#include "cli/command.hpp"
#include "common/user_error.hpp"

#include <cstdio>
#include <iostream>

namespace bfhpo::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> all{
      {"optimize", "run (or resume) a training study: memory gate, OOM backoff, journal", run_optimize},
      {"ask", "propose a trial, record it RUNNING, print {\"trial\": N, \"params\": {...}}", run_ask},
      {"tell", "finish a trial with a value or a state", run_tell},
      {"enqueue", "add a WAITING trial with fixed params, served first by ask", run_enqueue},
      {"requeue", "release a RUNNING trial whose caller is gone: FAIL, its params queued again", run_requeue},
      {"status", "counts by state, the best trial and a table of trials", run_status},
      {"report", "one self-contained HTML page of plots: history, importance, memory, diagnostics", run_report},
      {"export", "the best configuration (JSON, BayesFlow arguments) or every trial (JSON, CSV)", run_export},
      {"estimate", "estimated peak memory of one configuration, term by term, and the gate's decision", run_estimate},
      {"probe", "measure one real training step per memory configuration", run_probe},
      {"train", "train one configuration (the study's fixed values + PARAMS.json), print diagnostics", run_train},
      {"infer", "posterior draws of every item's parameters for a real response matrix", run_infer},
  };
  return all;
}

bool parse_verb_args(const std::string& verb, const std::string& usage,
                     boost::program_options::options_description& options,
                     const std::vector<std::string>& args, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  options.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(options);
  all.add_options()("study", po::value<std::string>(), "the study file");
  po::positional_options_description positional;
  positional.add("study", 1);
  const auto refuse = [&](const po::error& e) {
    return UserError("bfhpo " + verb + ": " + e.what() + ". Fix: see `bfhpo " + verb + " --help`");
  };
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  } catch (const po::error& e) {
    throw refuse(e);
  }
  if (vm.count("help")) {  // before notify, which insists on the required options
    std::cout << "usage: bfhpo " << verb << " " << usage << "\n\n" << options << "\n";
    return false;
  }
  try {
    po::notify(vm);
  } catch (const po::error& e) {
    throw refuse(e);
  }
  if (!vm.count("study"))
    throw UserError("bfhpo " + verb + ": missing STUDY.json. Fix: bfhpo " + verb + " " + usage);
  return true;
}

}  // namespace bfhpo::cli

namespace {

void print_usage() {
  std::cout << "bfhpo: hyperparameter optimization for amortized Bayesian inference networks\n\n"
               "usage: bfhpo VERB STUDY.json [options]     (bfhpo VERB --help for a verb's options)\n\n";
  for (const auto& c : bfhpo::cli::commands()) std::printf("  %-9s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string verb = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : bfhpo::cli::commands()) {
    if (verb != c.name) continue;
    try {
      return c.run(args);
    } catch (const bfhpo::UserError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
  }
  std::cerr << "error: unknown verb '" << verb << "'. Fix: use one of the verbs below\n";
  print_usage();
  return 2;
}
