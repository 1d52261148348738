#include "cli/command.hpp"
#include "trials/memory_report.hpp"

#include <iostream>

namespace bfhpo::cli {
namespace {

void add_memory_options(boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "budget-mb", po::value<double>(), "memory budget in MB (default: the study's memory.budget_mb)")(
      "json", "print JSON");
}

trials::MemoryRequest memory_request(const boost::program_options::variables_map& vm) {
  trials::MemoryRequest request;
  request.study_file = vm["study"].as<std::string>();
  if (vm.count("params")) request.params_file = vm["params"].as<std::string>();
  if (vm.count("budget-mb")) request.budget_mb = vm["budget-mb"].as<double>();
  return request;
}

}  // namespace

int run_estimate(const std::vector<std::string>& args) {
  boost::program_options::options_description options("bfhpo estimate");
  add_memory_options(options);
  boost::program_options::variables_map vm;
  if (!parse_verb_args("estimate", "STUDY.json [--params PARAMS.json] [--budget-mb N] [--json]", options, args, vm))
    return 0;
  const auto report = trials::estimate_configuration(memory_request(vm));
  std::cout << (vm.count("json") ? report.to_json().dump(2) + "\n" : report.text());
  return 0;
}

int run_probe(const std::vector<std::string>& args) {
  boost::program_options::options_description options("bfhpo probe");
  add_memory_options(options);
  boost::program_options::variables_map vm;
  if (!parse_verb_args("probe", "STUDY.json [--params PARAMS.json] [--budget-mb N] [--json]", options, args, vm))
    return 0;
  const auto report = trials::probe_configuration(memory_request(vm));
  std::cout << (vm.count("json") ? report.to_json().dump(2) + "\n" : report.table());
  return 0;
}

}  // namespace bfhpo::cli
