#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "tests/trials/tiny_setup.hpp"
#include "trials/starting_network.hpp"

#include <unistd.h>

#include <filesystem>

using namespace bfhpo;

TEST_CASE("starting_network: a fresh network, or the initial weights in the same network exactly",
          "[starting_network]") {
  auto options = test::tiny_training(1, 3, 8);
  auto trained = test::tiny_trainer(options);
  trained->fit();
  const auto path = std::filesystem::temp_directory_path() /
                    ("bfhpo_starting_network_test_" + std::to_string(::getpid()) + ".pt");
  trained->save_weights(path);

  trials::TrialConfig config;
  config.approximator = test::tiny_spec();
  config.simulator = test::tiny_simulator();
  config.training = options;
  config.training.seed = options.seed + 1;  // another initialisation than the trained network's
  const auto fresh = trials::starting_network(config, "study.json");
  CHECK_FALSE(test::same_state(test::state_of(*fresh), test::state_of(trained->approximator())));

  config.training.initial_weights = path.string();
  const auto fine_tuned = trials::starting_network(config, "study.json");
  CHECK(test::same_state(test::state_of(*fine_tuned), test::state_of(trained->approximator())));

  // Weights of another network: an error naming them and the configuration's file, not a silent partial load.
  config.approximator.flow.depth += 1;
  CHECK_THROWS_WITH(trials::starting_network(config, "study.json"),
                    Catch::Contains(path.string()) && Catch::Contains("do not belong to the configuration in study.json"));
  std::filesystem::remove(path);
  std::filesystem::remove(trials::Trainer::torchscript_path(path));
}
