#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "trials/trial_metric_names.hpp"

#include <iostream>
#include <stdexcept>

namespace bfhpo::cli {

std::optional<std::string> storage_override(const VerbArgs& args) {
  if (!args.count("storage")) return std::nullopt;
  return args["storage"].as<std::string>();
}

hpo::StudySpec load_study(const VerbArgs& args) {
  hpo::StudySpec spec = hpo::load_study_spec(args["study"].as<std::string>(), storage_override(args));
  if (spec.has_simulator()) trials::check_trial_metrics(spec);
  return spec;
}

VerbRun runner_of(const std::vector<VerbEntry>& entries, const std::string& name) {
  for (const auto& entry : entries)
    if (name == entry.name) return entry.run;
  throw std::logic_error("bfhpo: verb '" + name + "' has no entry point in this executable");
}

int run_verb(const Verb& verb, const std::vector<std::string>& args, const std::function<int(const VerbArgs&)>& run) {
  try {
    const auto parsed = parse_verb_args(verb, args);
    return parsed ? run(*parsed) : 0;
  } catch (const UserError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // A bug or a failure no check foresaw: its first line (LibTorch's without the C++ backtrace), not an abort.
    const std::string message = e.what();
    std::cerr << "error: " << message.substr(0, message.find('\n')) << "\n";
    return 2;
  }
}

}  // namespace bfhpo::cli
