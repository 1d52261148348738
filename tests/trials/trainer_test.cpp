#include <catch2/catch.hpp>

#include "tests/trials/tiny_setup.hpp"
#include "trials/trainer.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

using namespace bfhpo;
using namespace bfhpo::trials;

namespace {

constexpr double kLogTwoPi = 1.8378770664093454836;
constexpr double kPi = 3.14159265358979323846;

// The running standardization's statistics, actnorm's flags, the permutations.
std::vector<torch::Tensor> buffers_of(torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& b : module.buffers()) out.push_back(b.clone());
  return out;
}

// A ContinuousApproximator whose loss, when armed, back-propagates (gradients
// accumulate in the parameters) and then throws, as an OOM in backward would.
class FailingApproximatorImpl : public models::ContinuousApproximatorImpl {
 public:
  using ContinuousApproximatorImpl::ContinuousApproximatorImpl;
  models::LossTerms loss(const torch::Tensor& responses, const torch::Tensor& item_params,
                         const torch::Tensor& mask) override {
    auto terms = ContinuousApproximatorImpl::loss(responses, item_params, mask);
    if (armed) {
      armed = false;
      terms.total.backward();
      throw std::runtime_error("out of memory (simulated)");
    }
    return terms;
  }
  bool armed = false;
};

}  // namespace

TEST_CASE("Trainer: a short CPU run lowers the validation NLL well below the prior's", "[trainer]") {
  auto options = test::tiny_training(2, 30, 16);
  options.learning_rate = 5e-3;
  auto trainer = test::tiny_trainer(options);
  const auto summary = trainer->fit();
  REQUIRE(summary.reason == StopReason::completed);
  REQUIRE(summary.history.size() == 2);

  // Held-out items; NLL of (log a_j, b_j) per item in the original parameter space.
  const models::Simulator held_out(test::tiny_simulator(), 987, torch::kCPU);
  const auto batch = held_out.sample(32, 0);
  auto& approximator = trainer->approximator();
  approximator.eval();
  torch::NoGradGuard no_grad;
  const double model_nll = -approximator.log_prob(batch.item_params, batch.responses).mean().item<double>();
  // The prior log a ~ N(0, 0.5^2), b ~ N(0, 1) on the same items, in closed form.
  const auto log_a = batch.item_params.select(2, 0);
  const auto b = batch.item_params.select(2, 1);
  const double prior_nll =
      (0.5 * (log_a / 0.5).pow(2) + std::log(0.5) + 0.5 * b.pow(2) + kLogTwoPi).mean().item<double>();
  INFO("held-out NLL " << model_nll << ", prior NLL " << prior_nll << ", trainer validation loss "
                       << summary.history.front().validation_loss << " -> " << summary.validation_loss);
  REQUIRE(prior_nll == Approx(2.14).margin(0.3));  // about the prior's entropy, log(2 pi e) - log 2
  REQUIRE(model_nll < prior_nll - 0.3);
  REQUIRE(summary.validation_loss < summary.history.front().validation_loss);
}

TEST_CASE("Trainer: saved and loaded weights restore log_prob exactly", "[trainer]") {
  auto options = test::tiny_training(1, 5, 8);
  auto trained = test::tiny_trainer(options);
  trained->fit();
  const auto path = std::filesystem::temp_directory_path() /
                    ("bfhpo_trainer_test_" + std::to_string(::getpid()) + ".pt");
  trained->save_weights(path);
  options.seed += 1;  // another initialisation and other permutations
  auto loaded = test::tiny_trainer(options);

  const auto batch = models::Simulator(test::tiny_simulator(), 55, torch::kCPU).sample(4, 0);
  auto log_prob = [&](Trainer& trainer) {
    trainer.approximator().eval();  // training mode would update the standardization
    torch::NoGradGuard no_grad;
    return trainer.approximator().log_prob(batch.item_params, batch.responses);
  };
  REQUIRE_FALSE(torch::equal(log_prob(*loaded), log_prob(*trained)));
  loaded->load_weights(path);
  std::filesystem::remove(path);
  std::filesystem::remove(Trainer::torchscript_path(path));
  REQUIRE(torch::equal(log_prob(*loaded), log_prob(*trained)));
  REQUIRE(test::same_state(test::state_of(loaded->approximator()), test::state_of(trained->approximator())));
}

TEST_CASE("Trainer: linear warm-up then cosine decay", "[trainer]") {
  auto options = test::tiny_training(2, 8);  // 16 steps, warm-up ceil(0.25 * 16) = 4
  options.learning_rate = 0.1;
  options.warmup_fraction = 0.25;
  auto trainer = test::tiny_trainer(options);
  REQUIRE(trainer->learning_rate_at(0) == Approx(0.025));
  REQUIRE(trainer->learning_rate_at(1) == Approx(0.05));
  REQUIRE(trainer->learning_rate_at(3) == Approx(0.1));
  REQUIRE(trainer->learning_rate_at(4) == Approx(0.1));  // decay starts at the peak
  REQUIRE(trainer->learning_rate_at(7) == Approx(0.05 * (1 + std::cos(kPi * 3 / 12))));
  REQUIRE(trainer->learning_rate_at(10) == Approx(0.05));  // halfway
  REQUIRE(trainer->learning_rate_at(15) == Approx(0.05 * (1 + std::cos(kPi * 11 / 12))));
  REQUIRE(trainer->learning_rate_at(16) == Approx(0.0).margin(1e-15));

  // The optimizer runs each step at that step's rate.
  for (int step = 0; step < 5; ++step) {
    trainer->train_step();
    const auto& group = trainer->optimizer().param_groups().front();
    REQUIRE(static_cast<const torch::optim::AdamOptions&>(group.options()).lr() ==
            Approx(trainer->learning_rate_at(step)));
  }
}

TEST_CASE("Trainer: a run stopped from the epoch callback stops there", "[trainer]") {
  auto trainer = test::tiny_trainer(test::tiny_training(4, 3, 8));
  std::vector<int> epochs_seen;
  int steps_seen = 0;
  const auto summary = trainer->fit(
      [&](const EpochReport& report) {
        epochs_seen.push_back(report.epoch);
        return report.epoch < 2;
      },
      [&](const StepReport&) { ++steps_seen; });
  REQUIRE(summary.reason == StopReason::stopped_by_callback);
  REQUIRE(epochs_seen == std::vector<int>{1, 2});
  REQUIRE(summary.epochs_completed == 2);
  REQUIRE(summary.history.size() == 2);
  REQUIRE(summary.steps_completed == 6);
  REQUIRE(trainer->steps_completed() == 6);
  REQUIRE(steps_seen == 6);
}

TEST_CASE("Trainer: a step that throws leaves the step counter, weights and buffers unchanged", "[trainer]") {
  const auto options = test::tiny_training(1, 4, 8);
  torch::manual_seed(0);
  auto failing_impl = std::make_shared<FailingApproximatorImpl>(test::tiny_spec(), 0);
  Trainer failing(failing_impl, test::tiny_simulator(), options, torch::kCPU);
  torch::manual_seed(0);
  Trainer reference(std::make_shared<models::ContinuousApproximatorImpl>(test::tiny_spec(), 0), test::tiny_simulator(),
                    options, torch::kCPU);
  REQUIRE(test::same_state(test::state_of(*failing_impl), test::state_of(reference.approximator())));

  // A failing first step has already data-initialised actnorm's parameters;
  // with actnorm's flag restored the retry initialises them again.
  const bool first_step_fails = GENERATE(true, false);
  INFO("first step fails: " << first_step_fails);
  if (!first_step_fails) {
    failing.train_step();
    reference.train_step();
  }
  const int completed = first_step_fails ? 0 : 1;
  const auto state_before = test::state_of(*failing_impl);
  const auto buffers_before = buffers_of(*failing_impl);
  failing_impl->armed = true;
  REQUIRE_THROWS_WITH(failing.train_step(), Catch::Contains("out of memory"));
  REQUIRE(failing.steps_completed() == completed);
  REQUIRE(test::same_state(buffers_of(*failing_impl), buffers_before));
  if (!first_step_fails) REQUIRE(test::same_state(test::state_of(*failing_impl), state_before));

  // The retry trains on the same batch, without the failed step's gradients or statistics.
  failing.train_step();
  reference.train_step();
  REQUIRE(failing.steps_completed() == completed + 1);
  REQUIRE_FALSE(test::same_state(test::state_of(*failing_impl), state_before));
  const auto a = test::state_of(*failing_impl);
  const auto b = test::state_of(reference.approximator());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(torch::allclose(a[i], b[i], 1e-6, 1e-7));
}

TEST_CASE("Trainer: a diverging run stops with the reason, where it happened and the fix", "[trainer]") {
  auto options = test::tiny_training(3, 10, 8);
  options.learning_rate = 1e4;
  options.warmup_fraction = 0.0;
  options.clip_grad_norm = 0.0;
  auto trainer = test::tiny_trainer(options);
  const TrainingSummary summary = trainer->fit();
  REQUIRE(summary.reason == StopReason::diverged);
  CHECK_THAT(summary.detail, Catch::Contains("epoch") && Catch::Contains("learning_rate"));
  CHECK(trainer->steps_completed() < trainer->total_steps());
}
