#include <catch2/catch.hpp>

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

models::ApproximatorSpec tiny_spec() {
  models::ApproximatorSpec spec;
  spec.summary.cell_dim = 8;
  spec.summary.cell_mlp_width = 16;
  spec.summary.cell_mlp_depth = 1;
  spec.summary.embed_dim = 16;
  spec.summary.attention_heads = 2;
  spec.summary.attention_layers = 1;
  spec.summary.summary_dim = 8;
  spec.flow.depth = 3;
  spec.flow.subnet_width = 32;
  spec.flow.subnet_depth = 1;
  return spec;
}

models::IrtRanges small_ranges() { return models::IrtRanges{5, 10, 50, 100}; }

TrainingOptions short_run(int epochs, int num_batches) {
  TrainingOptions options;
  options.epochs = epochs;
  options.num_batches = num_batches;
  options.batch_size = 8;
  options.learning_rate = 5e-3;
  options.validation_sims = 16;
  options.seed = 4;
  return options;
}

Trainer make_trainer(TrainingOptions options, uint64_t init_seed = 0) {
  torch::manual_seed(static_cast<int64_t>(init_seed));
  return Trainer(models::make_approximator(tiny_spec(), init_seed), small_ranges(), options, torch::kCPU);
}

std::vector<torch::Tensor> weights_of(Trainer& trainer) {
  std::vector<torch::Tensor> out;
  for (const auto& p : trainer.approximator().parameters()) out.push_back(p.detach().clone());
  return out;
}

// The running standardization's statistics, actnorm's flags, the permutations.
std::vector<torch::Tensor> buffers_of(Trainer& trainer) {
  std::vector<torch::Tensor> out;
  for (const auto& b : trainer.approximator().buffers()) out.push_back(b.clone());
  return out;
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

// A ContinuousApproximator whose loss, when armed, back-propagates (gradients
// accumulate in the parameters) and then throws, as an OOM in backward would.
class FailingApproximatorImpl : public models::ContinuousApproximatorImpl {
 public:
  using ContinuousApproximatorImpl::ContinuousApproximatorImpl;
  models::LossTerms loss(const torch::Tensor& responses, const torch::Tensor& item_params) override {
    auto terms = ContinuousApproximatorImpl::loss(responses, item_params);
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
  auto trainer = make_trainer(short_run(2, 60));
  const auto summary = trainer.fit();
  REQUIRE(summary.reason == StopReason::completed);
  REQUIRE(summary.history.size() == 2);

  // Held-out items; NLL of (log a_j, b_j) per item in the original parameter space.
  const models::IrtSimulator held_out(small_ranges(), 987, torch::kCPU);
  const auto batch = held_out.sample_shape(16, 10, 75, 0);
  auto& approximator = trainer.approximator();
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
  REQUIRE(prior_nll == Approx(2.14).margin(0.3));  // the prior's entropy, log(2 pi e) - log 2
  REQUIRE(model_nll < prior_nll - 0.3);
  REQUIRE(summary.validation_loss < summary.history.front().validation_loss);
}

TEST_CASE("Trainer: saved and loaded weights restore log_prob exactly", "[trainer]") {
  auto trained = make_trainer(short_run(1, 5), 1);
  trained.fit();
  const auto path = std::filesystem::temp_directory_path() /
                    ("bfhpo_trainer_test_" + std::to_string(::getpid()) + ".pt");
  trained.save_weights(path);
  auto loaded = make_trainer(short_run(1, 5), 2);  // other initialisation and permutations

  const models::IrtSimulator simulator(small_ranges(), 55, torch::kCPU);
  const auto batch = simulator.sample(4, 0);
  auto log_prob = [&](Trainer& trainer) {
    trainer.approximator().eval();  // training mode would update the standardization
    torch::NoGradGuard no_grad;
    return trainer.approximator().log_prob(batch.item_params, batch.responses);
  };
  REQUIRE_FALSE(torch::equal(log_prob(loaded), log_prob(trained)));
  loaded.load_weights(path);
  std::filesystem::remove(path);
  REQUIRE(torch::equal(log_prob(loaded), log_prob(trained)));
}

TEST_CASE("Trainer: linear warm-up then cosine decay", "[trainer]") {
  auto options = short_run(2, 8);  // 16 steps, warm-up ceil(0.25 * 16) = 4
  options.learning_rate = 0.1;
  options.warmup_fraction = 0.25;
  auto trainer = make_trainer(options);
  REQUIRE(trainer.learning_rate_at(0) == Approx(0.025));
  REQUIRE(trainer.learning_rate_at(1) == Approx(0.05));
  REQUIRE(trainer.learning_rate_at(3) == Approx(0.1));
  REQUIRE(trainer.learning_rate_at(4) == Approx(0.1));                                // decay starts at the peak
  REQUIRE(trainer.learning_rate_at(7) == Approx(0.05 * (1 + std::cos(M_PI * 0.25))));  // (7 - 4) / 12
  REQUIRE(trainer.learning_rate_at(10) == Approx(0.05));                              // halfway
  REQUIRE(trainer.learning_rate_at(15) == Approx(0.05 * (1 + std::cos(M_PI * 11 / 12))));
  REQUIRE(trainer.learning_rate_at(16) == Approx(0.0).margin(1e-15));

  // The optimizer runs each step at that step's rate.
  for (int step = 0; step < 5; ++step) {
    trainer.train_step();
    const auto& group = trainer.optimizer().param_groups().front();
    REQUIRE(static_cast<const torch::optim::AdamOptions&>(group.options()).lr() ==
            Approx(trainer.learning_rate_at(step)));
  }
}

TEST_CASE("Trainer: a run stopped from the epoch callback stops there", "[trainer]") {
  auto trainer = make_trainer(short_run(4, 3));
  std::vector<int> epochs_seen;
  int steps_seen = 0;
  const auto summary = trainer.fit(
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
  REQUIRE(trainer.steps_completed() == 6);
  REQUIRE(steps_seen == 6);
}

TEST_CASE("Trainer: a step that throws leaves the step counter, weights and buffers unchanged", "[trainer]") {
  const auto options = short_run(1, 4);
  auto failing_impl = std::make_shared<FailingApproximatorImpl>(tiny_spec(), 0);
  torch::manual_seed(0);
  Trainer failing(failing_impl, small_ranges(), options, torch::kCPU);
  torch::manual_seed(0);
  Trainer reference(std::make_shared<models::ContinuousApproximatorImpl>(tiny_spec(), 0), small_ranges(), options,
                    torch::kCPU);
  REQUIRE(same_weights(weights_of(failing), weights_of(reference)));

  // A failing first step has already data-initialised actnorm's parameters;
  // with actnorm's flag restored the retry initialises them again.
  const bool first_step_fails = GENERATE(true, false);
  INFO("first step fails: " << first_step_fails);
  if (!first_step_fails) {
    failing.train_step();
    reference.train_step();
  }
  const int completed = first_step_fails ? 0 : 1;
  const auto weights_before = weights_of(failing);
  const auto buffers_before = buffers_of(failing);
  failing_impl->armed = true;
  REQUIRE_THROWS_WITH(failing.train_step(), Catch::Contains("out of memory"));
  REQUIRE(failing.steps_completed() == completed);
  REQUIRE(same_weights(buffers_of(failing), buffers_before));
  if (!first_step_fails) REQUIRE(same_weights(weights_of(failing), weights_before));

  // The retry trains on the same batch, without the failed step's gradients or statistics.
  failing.train_step();
  reference.train_step();
  REQUIRE(failing.steps_completed() == completed + 1);
  REQUIRE_FALSE(same_weights(weights_of(failing), weights_before));
  REQUIRE(same_weights(buffers_of(failing), buffers_of(reference)));
  const auto a = weights_of(failing);
  const auto b = weights_of(reference);
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(torch::allclose(a[i], b[i], 1e-6, 1e-7));
}
