#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/study.hpp"
#include "report/html_report.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace bfhpo::cli {

int run_report(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo report");
  options.add_options()("output,o", po::value<std::string>(),
                        "the HTML file to write (default: <study file without .json>.report.html beside it)");
  po::variables_map vm;
  if (!parse_verb_args("report", "STUDY.json [-o report.html]", options, args, vm)) return 0;
  const hpo::StudySpec spec = hpo::load_study_spec(vm["study"].as<std::string>());
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  const std::string html = report::html_report(spec, trials, study.system_attrs());

  std::filesystem::path output = vm.count("output") ? std::filesystem::path(vm["output"].as<std::string>())
                                                    : spec.source.parent_path() / (spec.source.stem().string() + ".report.html");
  const std::filesystem::path partial = output.string() + ".partial";
  {
    std::ofstream out(partial);
    out << html;
    if (!out.flush())
      throw UserError::at(output.string(), "", "cannot write the report",
                          "check the folder exists and is writable, or give another path with -o");
  }
  std::filesystem::rename(partial, output);
  std::cout << "wrote " << output.string() << " (" << trials.size() << " trials, " << html.size() / 1024
            << " KB; open it in any browser, it needs no network)\n";
  return 0;
}

}  // namespace bfhpo::cli
