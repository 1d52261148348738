#include "cli/command.hpp"
#include "cli/progress_display.hpp"
#include "trials/train_configuration.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_train(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo train");
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "epochs", po::value<int>(), "override training.epochs")(
      "out", po::value<std::string>(), "folder for weights.pt, config.json, result.json (default STUDY.json.train)")(
      "json", "print the result as JSON only");
  po::variables_map vm;
  if (!parse_verb_args("train", "STUDY.json [--params PARAMS.json] [--epochs N] [--out DIR] [--json]", options, args,
                       vm))
    return 0;
  trials::TrainRequest request;
  request.study_file = vm["study"].as<std::string>();
  if (vm.count("params")) request.params_file = vm["params"].as<std::string>();
  if (vm.count("epochs")) request.epochs = vm["epochs"].as<int>();
  if (vm.count("out")) request.out_dir = vm["out"].as<std::string>();

  ProgressDisplay progress("");
  const auto outcome = trials::train_configuration(
      request,
      [&](const trials::EpochReport& e) {
        progress.on_epoch(e.epoch, e.epochs, e.train_loss, e.validation_loss);
        return true;
      },
      [&](const trials::StepReport& s) { progress.on_step(s.epoch, s.epochs, s.step, s.num_batches, s.loss); });
  progress.finish();
  if (vm.count("json")) {
    std::cout << outcome.to_json().dump(2) << std::endl;
    return 0;
  }
  std::cout << "trained on " << outcome.device << " in " << outcome.seconds << " s: "
            << trials::to_string(outcome.summary.reason);
  if (!outcome.summary.detail.empty()) std::cout << " (" << outcome.summary.detail << ")";
  std::cout << "\nvalidation loss " << outcome.summary.validation_loss << " after "
            << outcome.summary.epochs_completed << " epochs\n\n"
            << outcome.diagnostics.table() << "\nweights, config and result in " << outcome.out_dir.string() << "\n";
  return 0;
}

}  // namespace bfhpo::cli
