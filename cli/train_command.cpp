#include "cli/command.hpp"
#include "cli/progress_display.hpp"
#include "trials/train_configuration.hpp"

#include <iostream>

namespace bfhpo::cli {

namespace {

void print_reproduction(const trials::TrainOutcome& outcome) {
  const auto& trial = *outcome.retrains;
  std::cout << "trial " << trial.trial << " had validation loss "
            << (trial.validation_loss ? std::to_string(*trial.validation_loss) : std::string("(not recorded)"));
  if (trial.validation_loss)
    std::cout << ", difference " << outcome.summary.validation_loss - *trial.validation_loss;
  if (outcome.reproduction_obstacles.empty()) {
    std::cout << "; same seed, threads, device and LibTorch: a reproduction\n";
    return;
  }
  std::cout << "; not an exact reproduction:\n";
  for (const auto& obstacle : outcome.reproduction_obstacles) std::cout << "  - " << obstacle << "\n";
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo train");
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "epochs", po::value<int>(), "override training.epochs")(
      "seed", po::value<uint64_t>(), "train with this seed (default: the exported trial's, else the study's)")(
      "out", po::value<std::string>(), "folder for weights.pt, config.json, result.json (default STUDY.json.train)")(
      "json", "print the result as JSON only");
  po::variables_map vm;
  if (!parse_verb_args("train", "STUDY.json [--params PARAMS.json] [--epochs N] [--seed S] [--out DIR] [--json]", options, args,
                       vm))
    return 0;
  trials::TrainRequest request;
  request.study_file = vm["study"].as<std::string>();
  if (vm.count("params")) request.params_file = vm["params"].as<std::string>();
  if (vm.count("epochs")) request.epochs = vm["epochs"].as<int>();
  if (vm.count("seed")) request.seed = vm["seed"].as<uint64_t>();
  if (vm.count("out")) request.out_dir = vm["out"].as<std::string>();

  ProgressDisplay progress;
  const auto outcome = trials::train_configuration(
      request,
      [&](const trials::EpochReport& e) {
        progress.on_epoch(e.epoch, e.epochs, e.train_loss, e.validation_loss);
        return true;
      },
      [&](const trials::StepReport& s) { progress.on_step(s.epoch, s.epochs, s.step, s.num_batches, s.loss); });
  progress.finish_trial();
  if (vm.count("json")) {
    std::cout << outcome.to_json().dump(2) << std::endl;
    return 0;
  }
  std::cout << "trained on " << outcome.device << " in " << outcome.seconds << " s: "
            << trials::to_string(outcome.summary.reason);
  if (!outcome.summary.detail.empty()) std::cout << " (" << outcome.summary.detail << ")";
  std::cout << "\nvalidation loss " << outcome.summary.validation_loss << " after "
            << outcome.summary.epochs_completed << " epochs (seed " << outcome.config.training.seed << ", "
            << outcome.threads << " threads)\n";
  if (outcome.retrains) print_reproduction(outcome);
  std::cout << "\n"
            << outcome.diagnostics.table() << "\nweights, config and result in " << outcome.out_dir.string() << "\n";
  return 0;
}

}  // namespace bfhpo::cli
