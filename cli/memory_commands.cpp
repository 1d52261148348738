#include "cli/command.hpp"
#include "trials/memory_report.hpp"

#include <functional>
#include <iostream>
#include <utility>

namespace bfhpo::cli {
namespace {

// Both verbs: the same options, one report of one configuration, as text or JSON.
// `report` maps the request to {JSON, text}.
int run_memory_verb(const std::string& verb, const std::vector<std::string>& args,
                    const std::function<std::pair<nlohmann::json, std::string>(const trials::MemoryRequest&)>& report) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo " + verb);
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "budget-mb", po::value<double>(), "memory budget in MB (default: the study's memory.budget_mb)")(
      "json", "print JSON");
  po::variables_map vm;
  if (!parse_verb_args(verb, "STUDY.json [--params PARAMS.json] [--budget-mb N] [--json]", options, args, vm))
    return 0;
  trials::MemoryRequest request;
  request.study_file = vm["study"].as<std::string>();
  if (vm.count("params")) request.params_file = vm["params"].as<std::string>();
  if (vm.count("budget-mb")) request.budget_mb = vm["budget-mb"].as<double>();
  const auto [json, text] = report(request);
  std::cout << (vm.count("json") ? json.dump(2) + "\n" : text);
  return 0;
}

}  // namespace

int run_estimate(const std::vector<std::string>& args) {
  return run_memory_verb("estimate", args, [](const trials::MemoryRequest& request) {
    const auto report = trials::estimate_configuration(request);
    return std::make_pair(report.to_json(), report.text());
  });
}

int run_probe(const std::vector<std::string>& args) {
  return run_memory_verb("probe", args, [](const trials::MemoryRequest& request) {
    const auto report = trials::probe_configuration(request);
    return std::make_pair(report.to_json(), report.table());
  });
}

}  // namespace bfhpo::cli
