#include "cli/command.hpp"
#include "cli/progress_display.hpp"
#include "common/number_format.hpp"
#include "trials/train_configuration.hpp"

#include <iostream>

namespace bfhpo::cli {

namespace {

void print_reproduction(const trials::TrainOutcome& outcome) {
  const auto& trial = *outcome.retrains;
  std::cout << "trial " << trial.trial << " had validation loss "
            << (trial.validation_loss ? format_exact(*trial.validation_loss) : std::string("(not recorded)"));
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

int run_train(const VerbArgs& args) {
  trials::TrainRequest request;
  request.study_file = args["study"].as<std::string>();
  if (args.count("params")) request.params_file = args["params"].as<std::string>();
  if (args.count("epochs")) request.epochs = args["epochs"].as<int>();
  if (args.count("seed")) request.seed = args["seed"].as<uint64_t>();
  if (args.count("out")) request.out_dir = args["out"].as<std::string>();

  ProgressDisplay progress;
  const auto outcome = trials::train_configuration(
      request,
      [&](const trials::EpochReport& e) {
        progress.on_epoch(e.epoch, e.epochs, e.train_loss, e.validation_loss);
        return true;
      },
      [&](const trials::StepReport& s) { progress.on_step(s.epoch, s.epochs, s.step, s.num_batches, s.loss); });
  progress.finish_trial();
  if (args.count("json")) {
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
