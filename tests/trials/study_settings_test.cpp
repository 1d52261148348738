#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "hpo/study_spec.hpp"
#include "trials/study_settings.hpp"

#include <limits>
#include <random>

using bfhpo::UserError;
using namespace bfhpo::trials;
using nlohmann::json;

namespace {

bfhpo::hpo::StudySpec study_with(const json& extra) {
  json document = {{"name", "t"},
                   {"simulator", {{"model", "2pl"}}},
                   {"training", {{"epochs", 2}, {"batch_size", 8}, {"device", "cpu"}}},
                   {"search_space", {{"flow.depth", {{"type", "int"}, {"low", 1}, {"high", 3}}}}}};
  document.update(extra);
  return bfhpo::hpo::parse_study_spec(document, "study.json");
}

std::string error_of(const json& extra) {
  try {
    const auto study = study_with(extra);
    check_batch_sizes(parse_study_settings(study), study_trial_config(study), study);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("OomRetryOptions::problem holds exactly for a bad ladder, factor or minimum", "[study_settings]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> length(0, 5), size(-1, 20), minimum(-1, 6);
  std::uniform_real_distribution<double> factor(0.5, 3.0);
  for (int i = 0; i < 3000; ++i) {
    OomRetryOptions options;
    options.min_batch_size = minimum(rng);
    options.backoff_factor = factor(rng);
    const auto random_ladder = [&] {
      std::vector<int64_t> ladder;
      for (int k = length(rng); k > 0; --k) ladder.push_back(size(rng));
      return ladder;
    };
    const auto decreasing = [](const std::vector<int64_t>& ladder) {
      for (std::size_t k = 0; k < ladder.size(); ++k)
        if (ladder[k] < 1 || (k > 0 && ladder[k] >= ladder[k - 1])) return false;
      return true;
    };
    options.ladder.item_chunks = random_ladder();
    options.ladder.person_chunks = random_ladder();
    const bool ladder_ok = !options.ladder.item_chunks.empty() && decreasing(options.ladder.item_chunks) &&
                           decreasing(options.ladder.person_chunks);
    const bool valid = options.min_batch_size >= 1 && options.backoff_factor > 1 && ladder_ok;
    CHECK(options.problem().has_value() == !valid);
  }
}

TEST_CASE("TrainingOptions::problem holds exactly for bad rates, fractions, clips and step counts", "[study_settings]") {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> rate(-1e-3, 1e-2), fraction(-0.2, 1.2), clip(-2, 2);
  std::uniform_int_distribution<int> count(1, std::numeric_limits<int>::max());
  for (int i = 0; i < 3000; ++i) {
    TrainingOptions options;
    options.learning_rate = rate(rng);
    options.warmup_fraction = fraction(rng);
    options.clip_grad_norm = clip(rng);
    options.epochs = i % 2 ? count(rng) : 10;
    options.num_batches = i % 3 ? count(rng) : 50;
    const bool valid = options.learning_rate > 0 && options.warmup_fraction >= 0 && options.warmup_fraction < 1 &&
                       options.clip_grad_norm >= 0 &&
                       static_cast<double>(options.epochs) * options.num_batches <= std::numeric_limits<int>::max();
    CHECK(options.problem().has_value() == !valid);
  }
  TrainingOptions off;
  off.clip_grad_norm = 0;  // clipping turned off
  CHECK_FALSE(off.problem());
}

TEST_CASE("study settings: unknown keys, types and cross-section checks name the field", "[study_settings]") {
  CHECK(error_of(json::object()).empty());
  CHECK_THAT(error_of({{"memory", {{"oom_retry", {{"min_batch_siz", 2}}}}}}),
             Catch::Contains("did you mean 'memory.oom_retry.min_batch_size'"));
  CHECK_THAT(error_of({{"objective", {{"val_nll", "x"}}}}),
             Catch::Contains("objective.val_nll") && Catch::Contains("expected a number, got a string"));
  CHECK_THAT(error_of({{"memory", {{"oom_retry", {{"min_batch_size", 9}}}}}}),
             Catch::Contains("memory.oom_retry.min_batch_size") && Catch::Contains("exceeds training.batch_size 8"));
  CHECK(error_of({{"memory", {{"oom_retry", {{"min_batch_size", 8}}}}}}).empty());
  json searched = {{"memory", {{"oom_retry", {{"min_batch_size", 32}}}}}};
  searched["search_space"]["training.batch_size"] = {{"type", "categorical"}, {"choices", {8, 32}}};
  CHECK(error_of(searched).empty());  // a trial may train with 32
  searched["memory"]["oom_retry"]["min_batch_size"] = 33;
  CHECK_THAT(error_of(searched), Catch::Contains("the largest searched training.batch_size 32"));
  CHECK_THAT(error_of({{"training", {{"epochs", 3000000000LL}, {"device", "cpu"}}}}),
             Catch::Contains("training.epochs") && Catch::Contains("[1, 2147483647]"));
}
