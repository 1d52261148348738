#include "cli/command.hpp"
#include "trials/memory_report.hpp"

#include <functional>
#include <iostream>
#include <utility>

namespace bfhpo::cli {
namespace {

// Both verbs: the same options, one report of one configuration, as text or JSON.
// `report` maps the request to {JSON, text}.
int run_memory_verb(const VerbArgs& args,
                    const std::function<std::pair<nlohmann::json, std::string>(const trials::MemoryRequest&)>& report) {
  trials::MemoryRequest request;
  request.study_file = args["study"].as<std::string>();
  if (args.count("params")) request.params_file = args["params"].as<std::string>();
  if (args.count("budget-mb")) request.budget_mb = args["budget-mb"].as<double>();
  const auto [json, text] = report(request);
  std::cout << (args.count("json") ? json.dump(2) + "\n" : text);
  return 0;
}

}  // namespace

int run_estimate(const VerbArgs& args) {
  return run_memory_verb(args, [](const trials::MemoryRequest& request) {
    const auto report = trials::estimate_configuration(request);
    return std::make_pair(report.to_json(), report.text());
  });
}

int run_probe(const VerbArgs& args) {
  return run_memory_verb(args, [](const trials::MemoryRequest& request) {
    const auto report = trials::probe_configuration(request);
    return std::make_pair(report.to_json(), report.table());
  });
}

}  // namespace bfhpo::cli
