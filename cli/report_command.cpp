#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "hpo/study.hpp"
#include "report/html_report.hpp"

#include <filesystem>
#include <iostream>

namespace bfhpo::cli {

int run_report(const VerbArgs& args) {
  const hpo::StudySpec spec = load_study(args);
  hpo::Study study(spec, nullptr, hpo::Study::Open::ReadOnly);
  const auto trials = study.trials();
  const auto levels = report::parse_memory_levels_gb(args["memory-levels"].as<std::string>(), "bfhpo report: --memory-levels");
  const std::string html = report::html_report(spec, trials, study.system_attrs(), levels);

  const std::filesystem::path output =
      args.count("output") ? std::filesystem::path(args["output"].as<std::string>())
                           : spec.source.parent_path() / (spec.source.stem().string() + ".report.html");
  write_file_atomically(output, html);
  std::cerr << "wrote " << output.string() << " (" << trials.size() << " trials, " << html.size() / 1024
            << " KB; open it in any browser, it needs no network)\n";
  return 0;
}

}  // namespace bfhpo::cli
