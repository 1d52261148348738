#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "models/simulators/simulator.hpp"
#include "tests/inference/untrained_model.hpp"
#include "inference/posterior_predictive_check.hpp"
#include "inference/summary_space_check.hpp"

#include <sched.h>

#include <cmath>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

// Item j's statistics computed another way (torch's masked reductions and
// torch::quantile), in double: the reference for item_statistics.
std::vector<double> direct_statistics(const torch::Tensor& responses, const torch::Tensor& mask, int64_t j,
                                      int64_t n_categories) {
  const auto y = responses.to(torch::kFloat64), m = mask.to(torch::kFloat64);
  const auto r = y / static_cast<double>(n_categories - 1);
  std::vector<double> out;
  const auto answered = m.select(1, j).to(torch::kBool);
  for (int64_t k = 0; k < n_categories; ++k)
    out.push_back((y.select(1, j).eq(static_cast<double>(k)) & answered).sum().item<double>() /
                  answered.sum().item<double>());
  const auto others = (m.sum(1) - m.select(1, j));
  const auto rest_all = ((r * m).sum(1) - r.select(1, j) * m.select(1, j)) / others;
  const auto used = answered & others.gt(0);
  const auto score = r.select(1, j).index({used}), rest = rest_all.index({used});
  const auto cs = score - score.mean(), cr = rest - rest.mean();
  out.push_back(((cs * cr).sum() / (cs.pow(2).sum() * cr.pow(2).sum()).sqrt()).item<double>());
  const double lower = torch::quantile(rest, 1.0 / 3.0).item<double>();
  const double upper = torch::quantile(rest, 2.0 / 3.0).item<double>();
  out.push_back(score.index({rest.lt(lower - 1e-9)}).mean().item<double>());
  out.push_back(score.index({rest.gt(upper + 1e-9)}).mean().item<double>());
  // The sd of item j's pairwise correlations, one pair at a time.
  std::vector<double> pair_r;
  for (int64_t k = 0; k < responses.size(1); ++k) {
    if (k == j) continue;
    const auto both = answered & m.select(1, k).to(torch::kBool);
    if (both.sum().item<int64_t>() < 2) continue;
    const auto a = r.select(1, j).index({both}), c = r.select(1, k).index({both});
    const auto ca = a - a.mean(), cc = c - c.mean();
    const double saa = ca.pow(2).mean().item<double>(), scc = cc.pow(2).mean().item<double>();
    if (saa <= 1e-12 || scc <= 1e-12) continue;
    pair_r.push_back((ca * cc).mean().item<double>() / std::sqrt(saa * scc));
  }
  double mean = 0.0, squares = 0.0;
  for (double value : pair_r) mean += value / static_cast<double>(pair_r.size());
  for (double value : pair_r) squares += (value - mean) * (value - mean);
  out.push_back(std::sqrt(squares / static_cast<double>(pair_r.size() - 1)));
  return out;
}

inference::ResponseMatrix matrix_of(const torch::Tensor& responses, const torch::Tensor& mask) {
  inference::ResponseMatrix data;
  for (int64_t j = 0; j < responses.size(1); ++j) data.item_names.push_back("item" + std::to_string(j));
  data.responses = responses;
  data.mask = mask;
  return data;
}

// A posterior whose every draw is `item_params` [J, D]: the check of the true parameters.
inference::PosteriorDraws point_posterior(const torch::Tensor& item_params, const std::vector<std::string>& names,
                                       int64_t draws = 4) {
  inference::PosteriorDraws posterior;
  posterior.item_names = names;
  posterior.draws = item_params.unsqueeze(1).expand({item_params.size(0), draws, item_params.size(1)}).contiguous();
  posterior.log_prob = torch::zeros({item_params.size(0), draws});
  return posterior;
}

int64_t count_misfits(const inference::PredictiveCheck& check) {
  return static_cast<int64_t>(check.misfitting_items().size());
}

}  // namespace

TEST_CASE("item_statistics: category shares, item-rest correlation and tertile means as computed directly",
          "[posterior_predictive_check]") {
  // 40 persons with 1 to 5 other items answered: with 2 and 4 categories the rest scores' possible values
  // (18 and 39) are no more than the persons, so the tertiles count them into bins; with 6 they are
  // more (74), so the tertiles select among the persons' rests.
  for (const int64_t n_categories : {2, 4, 6}) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(17 + n_categories);
    const auto responses =
        at::randint(0, n_categories, {40, 6}, generator, torch::TensorOptions().dtype(torch::kFloat32));
    auto mask = (at::rand({40, 6}, generator) > 0.15).to(torch::kFloat32);
    mask.index_put_({0, torch::indexing::Slice()}, 0.0f);                      // a person who answered nothing
    mask.index_put_({1, torch::indexing::Slice()}, 0.0f);
    mask.index_put_({1, 2}, 1.0f);                                             // one who answered only item 2
    const auto stats = inference::item_statistics(responses * mask, mask, n_categories);
    REQUIRE(stats.sizes() == std::vector<int64_t>{n_categories + 4, 6});
    CHECK(inference::item_statistic_names(n_categories).size() == static_cast<size_t>(n_categories + 4));
    for (int64_t j = 0; j < 6; ++j) {
      const auto expected = direct_statistics(responses * mask, mask, j, n_categories);
      // In double over 40 values in [0, 1]: the two ways differ by rounding, near 1e-15 (the
      // correlations from raw sums, not centred ones, lose a few more digits to cancellation).
      for (int64_t s = 0; s < n_categories + 4; ++s) {
        INFO("K " << n_categories << ", item " << j << ", statistic " << inference::item_statistic_names(n_categories)[s]);
        CHECK(stats[s][j].item<double>() == Approx(expected[static_cast<size_t>(s)]).margin(1e-10));
      }
    }
  }
  // No variance in an item: its correlation is undefined (NaN), its shares are not.
  const auto constant = torch::tensor({{1.0f, 0.0f}, {1.0f, 1.0f}, {1.0f, 0.0f}});
  const auto stats = inference::item_statistics(constant, torch::ones_like(constant), 2);
  CHECK(std::isnan(stats[2][0].item<double>()));
  CHECK(stats[1][0].item<double>() == 1.0);
  // The same with 4 categories, every answer to item 0 a 1 (a third of the range, not a binary fraction):
  // its mean is n/3 over n, rounded, yet the item has no variance whatever n is; nor has item 1's rest
  // score (item 0's).
  for (int64_t persons = 3; persons <= 60; ++persons) {
    auto graded = torch::ones({persons, 2});
    graded.select(1, 1).copy_(torch::arange(persons).remainder(4).to(torch::kFloat32));
    const auto graded_stats = inference::item_statistics(graded, torch::ones_like(graded), 4);
    INFO(persons << " persons");
    CHECK(std::isnan(graded_stats[4][0].item<double>()));
    CHECK(std::isnan(graded_stats[4][1].item<double>()));
  }
}

TEST_CASE("item_statistics: a batch of matrices with one mask gives each matrix's statistics as alone",
          "[posterior_predictive_check]") {
  for (const int64_t n_categories : {2, 5}) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(29 + n_categories);
    const auto mask = (at::rand({30, 7}, generator) > 0.2).to(torch::kFloat32);
    const auto batch =
        at::randint(0, n_categories, {4, 30, 7}, generator, torch::TensorOptions().dtype(torch::kFloat32)) * mask;
    batch.select(0, 2).select(1, 3).fill_(0.0f);  // one matrix with an item nobody varies on: NaN correlations
    const auto together = inference::item_statistics(batch, mask, n_categories);
    REQUIRE(together.sizes() == std::vector<int64_t>{4, n_categories + 4, 7});
    for (int64_t r = 0; r < 4; ++r) {
      const auto alone = inference::item_statistics(batch[r], mask, n_categories);
      INFO("K " << n_categories << ", matrix " << r);
      // The same operations over one more dimension: equal up to the order of a few sums in double.
      CHECK(torch::allclose(together[r], alone, 0.0, 1e-12, /*equal_nan=*/true));
      CHECK(torch::isnan(together[r]).eq(torch::isnan(alone)).all().item<bool>());
    }
    CHECK(std::isnan(together[2][n_categories][3].item<double>()));
  }
}

TEST_CASE("tail_probability: two-sided, one added to each count, NaN left out", "[posterior_predictive_check]") {
  // 3 of 5 at least 0.5 and 3 of 5 at most: 2 * 4 / 6 > 1, so 1.
  CHECK(inference::tail_probability(0.5, {0.1, 0.2, 0.5, 0.6, 0.7}) == 1.0);
  // None below 0: 2 * (0 + 1) / (5 + 1).
  CHECK(inference::tail_probability(0.0, {0.1, 0.2, 0.3, 0.6, 0.7}) == Approx(2.0 / 6.0));
  // 1 of 9 at least 0.65: 2 * 2 / 10, the NaN not counted.
  CHECK(inference::tail_probability(0.65, {0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.62, 0.7, std::nan("")}) ==
        Approx(0.4));
  CHECK(std::isnan(inference::tail_probability(std::nan(""), {0.1, 0.2})));
}

TEST_CASE("check_options_valid: a check that could flag nothing is refused", "[posterior_predictive_check]") {
  CHECK_NOTHROW(inference::check_options_valid({500, 0.05, 1}, 5, "x"));
  // 0.05 / 5 = 0.01 is not above 2 / 101: no item could be flagged.
  CHECK_THROWS_WITH(inference::check_options_valid({100, 0.05, 1}, 5, "x"),
                    Catch::Contains("no item could be flagged") && Catch::Contains("at least 200 replications"));
  CHECK_THROWS_AS(inference::check_options_valid({500, 1.5, 1}, 5, "x"), UserError);
  CHECK_THROWS_AS(inference::check_options_valid({1, 0.5, 1}, 5, "x"), UserError);
}

TEST_CASE("default_replications: 500, or the fewest that can flag an item of many statistics",
          "[posterior_predictive_check]") {
  CHECK(inference::default_replications(6, 0.05) == 500);  // a binary item: 0.05 / 6 is far above 2 / 501
  // A graded item of K = 9 has 13 statistics: 0.05 / 13 needs 520 replications; 500 could flag nothing.
  const auto k9 = static_cast<int64_t>(inference::item_statistic_names(9).size());
  REQUIRE(k9 == 13);
  CHECK(inference::default_replications(k9, 0.05) == 520);
  CHECK_NOTHROW(inference::check_options_valid({inference::default_replications(k9, 0.05), 0.05, 1}, k9, "x"));
  CHECK_THROWS_WITH(inference::check_options_valid({519, 0.05, 1}, k9, "x"), Catch::Contains("at least 520"));
  const auto k30 = static_cast<int64_t>(inference::item_statistic_names(30).size());
  CHECK_NOTHROW(inference::check_options_valid({inference::default_replications(k30, 0.01), 0.01, 1}, k30, "x"));
  // An alpha check_options_valid refuses leaves the default as it is.
  CHECK(inference::default_replications(k9, 0.0) == 500);
  CHECK(inference::default_replications(k9, 1.5) == 500);
}

TEST_CASE("posterior_predictive_check: with the true parameters, false flags at most at the nominal rate",
          "[posterior_predictive_check]") {
  // 4 data sets x 30 items of the 2PL, the posterior a point at the truth.
  // Each item's false-flag chance is at most alpha = 0.05 (Bonferroni over its
  // 5 statistics), and less: posterior predictive tail probabilities are
  // conservative. Of 120 items, Binomial(120, 0.05) has mean 6 and sd 2.4:
  // 13 is above its mean by 3 sd.
  const auto spec = test::simulator_at({30, 30, 400, 400}, "2pl");
  const auto model = models::make_item_response_model(spec);
  int64_t flagged = 0, items = 0;
  double rest_p_sum = 0.0;
  for (uint64_t set = 0; set < 4; ++set) {
    const auto batch = models::Simulator(spec, 100 + set, torch::kCPU).sample(1, 0);
    const auto data = matrix_of(batch.responses[0], batch.mask[0]);
    const auto posterior = point_posterior(batch.item_params[0], data.item_names);
    const auto check = inference::posterior_predictive_check(*model, data, posterior, {300, 0.05, set});
    flagged += count_misfits(check);
    for (const auto& item : check.items) {
      rest_p_sum += item.statistics[2].tail_probability;
      ++items;
    }
  }
  INFO(flagged << " of " << items << " items flagged");
  CHECK(flagged <= 13);
  // Tail probabilities of a fitting model spread over (0, 1]: their mean is 0.5 when uniform, more
  // when conservative; well below 0.5 would say the replications miss the data.
  CHECK(rest_p_sum / static_cast<double>(items) > 0.4);
}

TEST_CASE("posterior_predictive_check: a second dimension and guessing are flagged, deterministically",
          "[posterior_predictive_check]") {
  // 30 items, 600 persons. Items 0..14 answer to ability 1, items 15..29 to an
  // independent ability 2; items 0..4 also have guessing c = 0.35 (3PL). The
  // "posterior" is the items' true (log a, b) under the 2PL: replications of
  // one ability correlate each item with the rest more than the data do and
  // spread its correlations with the other items less, and put the weakest
  // persons under c on the guessing items.
  constexpr int64_t persons = 600, items = 30;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(41);
  const auto options = torch::TensorOptions().dtype(torch::kFloat32);
  const auto theta = at::normal(0.0, 1.0, {persons, 2}, generator, options);
  const auto log_a = at::normal(0.3, 0.2, {items}, generator, options);
  const auto b = at::normal(0.0, 0.7, {items}, generator, options);
  const auto dimension = (torch::arange(items) >= items / 2).to(torch::kLong);
  const auto ability = theta.index_select(1, dimension);  // [P, J]
  auto guessing = torch::zeros({items});
  guessing.narrow(0, 0, 5).fill_(0.35);
  const auto p = guessing + (1 - guessing) * torch::sigmoid(log_a.exp() * (ability - b));
  const auto responses = (at::rand({persons, items}, generator, options) < p).to(torch::kFloat32);
  const auto data = matrix_of(responses, torch::ones_like(responses));
  const auto model = models::make_item_response_model(test::simulator_at({items, items, persons, persons}, "2pl"));
  const auto posterior = point_posterior(torch::stack({log_a, b}, 1), data.item_names);
  const auto check = inference::posterior_predictive_check(*model, data, posterior, {300, 0.05, 7});
  INFO(check.to_csv());
  CHECK(count_misfits(check) >= items / 2);
  // Each statistic says what is wrong. Were the data the model's, each count below would be
  // Binomial(30, 1/2) (a sign) or Binomial(30, 0.025) (beyond a 95% interval's upper end): 24
  // or more has probability below 0.001 either way.
  int64_t rest_below = 0, pairs_above = 0;
  for (const auto& item : check.items) {
    rest_below += item.statistics[2].observed < item.statistics[2].replicated_mean;
    pairs_above += item.statistics[5].observed > item.statistics[5].replicated_q975;
  }
  CHECK(rest_below >= 24);
  CHECK(pairs_above >= 24);
  for (int64_t j = 0; j < 5; ++j) {  // guessing: the weakest score above what a 2PL replicates
    INFO("guessing item " << j);
    CHECK(check.items[static_cast<size_t>(j)].statistics[3].observed >
          check.items[static_cast<size_t>(j)].statistics[3].replicated_q975);
  }
  const auto again = inference::posterior_predictive_check(*model, data, posterior, {300, 0.05, 7});
  CHECK(again.to_csv() == check.to_csv());
  // On one core (the replications' chunks in turn rather than side by side): the same check.
  cpu_set_t all, one;
  REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  const auto one_core = inference::posterior_predictive_check(*model, data, posterior, {300, 0.05, 7});
  REQUIRE(sched_setaffinity(0, sizeof(all), &all) == 0);
  CHECK(one_core.to_csv() == check.to_csv());
  CHECK(inference::posterior_predictive_check(*model, data, posterior, {300, 0.05, 8}).to_csv() != check.to_csv());
  CHECK(check.warnings().size() == static_cast<size_t>(count_misfits(check)));
  CHECK(check.to_json()["misfitting"].size() == static_cast<size_t>(count_misfits(check)));
}

TEST_CASE("mmd2_to_reference: the multi-scale Gaussian kernel MMD computed directly", "[summary_space_check]") {
  const auto x = torch::tensor({0.3, -1.0}, torch::kFloat64);
  const auto reference = torch::tensor({{0.0, 0.0}, {1.0, 0.5}, {-0.5, 2.0}}, torch::kFloat64);
  const double bandwidth = 0.8;
  const auto k = [&](const torch::Tensor& a, const torch::Tensor& c) {
    const double squared = (a - c).pow(2).sum().item<double>();
    double sum = 0.0;
    for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0}) sum += std::exp(-squared / (2.0 * std::pow(scale * bandwidth, 2)));
    return sum;
  };
  double cross = 0.0, within = 0.0;
  for (int64_t i = 0; i < 3; ++i) {
    cross += k(x, reference[i]);
    for (int64_t l = 0; l < 3; ++l) within += k(reference[i], reference[l]);
  }
  const double expected = k(x, x) - 2.0 * cross / 3.0 + within / 9.0;
  CHECK(inference::mmd2_to_reference(x, reference, bandwidth) == Approx(expected).margin(1e-12));
  // A point at the reference's centre is nearer than one far off.
  CHECK(inference::mmd2_to_reference(torch::tensor({0.2, 0.8}, torch::kFloat64), reference, bandwidth) <
        inference::mmd2_to_reference(torch::tensor({5.0, 5.0}, torch::kFloat64), reference, bandwidth));
}

TEST_CASE("summary_space_check: data sets of one shape share the simulated side, and it is the same check",
          "[summary_space_check]") {
  const auto spec = test::simulator_at({5, 5, 30, 30}, "2pl", 2, 0.0);
  auto model = test::untrained_model(spec);
  const models::Simulator simulator(spec, 12, torch::kCPU);
  inference::SummarySpaceReferences references;
  for (uint64_t set = 0; set < 3; ++set) {
    const auto data = test::data_of(simulator.sample(1, set));
    const auto shared = inference::summary_space_check(model, data, 4, &references);
    const auto alone = inference::summary_space_check(model, data, 4);
    // The summary the amortized draws conditioned on, handed over: the check the network's own pass gives.
    const auto posterior = inference::infer_posterior(model, data, 8, 1);
    REQUIRE(posterior.summary.defined());
    const auto handed = inference::summary_space_check(model, data, 4, &references, posterior.summary);
    CHECK(handed.mmd2 == alone.mmd2);
    CHECK(handed.p_value == alone.p_value);
    // And it is the handed summary that counts: another data set's gives another distance.
    const auto other = inference::infer_posterior(model, test::data_of(simulator.sample(1, set + 10)), 8, 1).summary;
    CHECK(inference::summary_space_check(model, data, 4, &references, other).mmd2 != alone.mmd2);
    CHECK(shared.mmd2 == alone.mmd2);
    CHECK(shared.p_value == alone.p_value);
    CHECK(shared.percentile == alone.percentile);
    CHECK(shared.held_out_median == alone.held_out_median);
  }
  CHECK(references.size() == 1);
  // Another seed is another simulation.
  inference::summary_space_check(model, test::data_of(simulator.sample(1, 0)), 5, &references);
  CHECK(references.size() == 2);
}
