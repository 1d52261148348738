#include "cli/command.hpp"
#include "common/user_error.hpp"
#include "hpo/study.hpp"
#include "report/html_report.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace bfhpo::cli {

int run_report(const VerbArgs& args) {
  const hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  const std::string html = report::html_report(spec, trials, study.system_attrs());

  std::filesystem::path output = args.count("output") ? std::filesystem::path(args["output"].as<std::string>())
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
