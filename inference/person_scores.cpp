#include "inference/person_scores.hpp"

#include "inference/grid_ability_posterior.hpp"
#include "inference/ability_grid.hpp"
#include "common/csv_field.hpp"
#include "common/number_format.hpp"
#include "models/simulators/seed_mix.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <vector>

namespace bfhpo::inference {
namespace {

constexpr double kGridStep = 2.0 * kAbilityLimit / static_cast<double>(kAbilityGridPoints - 1);

// The q quantile of masses at the grid points, each spread over its cell [theta_g - h/2, theta_g + h/2].
double histogram_quantile(const double* mass, double q) {
  double below = 0.0;
  for (int64_t g = 0; g < kAbilityGridPoints; ++g) {
    if (mass[g] > 0.0 && below + mass[g] >= q)
      return -kAbilityLimit + (static_cast<double>(g) - 0.5 + (q - below) / mass[g]) * kGridStep;
    below += mass[g];
  }
  return kAbilityLimit + 0.5 * kGridStep;
}

// Evenly spaced indices of `n` draws, `count` of them (all when there are fewer).
torch::Tensor spaced_draws(int64_t n, int64_t count) {
  if (count >= n) return torch::arange(n, torch::kLong);
  return torch::linspace(0.0, static_cast<double>(n - 1), count, torch::kFloat64).round().to(torch::kLong);
}

}  // namespace

PersonScores score_persons(const models::ItemResponseModel& model, const ResponseMatrix& data,
                           const PosteriorDraws& posterior, const PersonScoreOptions& options,
                           const DrawAbilityTable* table) {
  torch::NoGradGuard no_grad;
  const auto chosen = spaced_draws(posterior.draws.size(1), std::max<int64_t>(1, options.item_draws));
  const auto params = posterior.draws.index_select(1, chosen).permute({1, 0, 2}).to(torch::kFloat64);  // [S, J, D]
  const GridAbilityPosterior abilities(model, data);
  const int64_t persons = abilities.persons();
  const int64_t sets = params.size(0);
  // Chunks of draws on the cores, their sums added in chunk order: the same mixture on any number of cores.
  const auto chunks = grid_chunks(sets, persons);
  std::vector<torch::Tensor> chunk_sums(chunks.size());
  trials::for_each_on_workers(static_cast<int64_t>(chunks.size()), [&](int64_t chunk) {
    const auto [start, count] = chunks[static_cast<size_t>(chunk)];
    const auto posteriors = table ? table->posteriors(chosen.narrow(0, start, count)) : abilities(params.narrow(0, start, count));
    chunk_sums[static_cast<size_t>(chunk)] = posteriors.sum(0).to(torch::kFloat64);
  });
  auto mixture = torch::zeros({persons, kAbilityGridPoints}, torch::kFloat64);
  for (const auto& sum : chunk_sums) mixture += sum;
  mixture /= static_cast<double>(sets);

  const auto& grid = abilities.grid();
  const auto mean = (mixture * grid).sum(1);
  const auto sd = ((mixture * grid * grid).sum(1) - mean * mean).clamp_min(0.0).sqrt();
  auto quantiles = torch::empty({persons, 3}, torch::kFloat64);
  const auto masses = mixture.contiguous();
  const double* mass = masses.data_ptr<double>();
  auto q = quantiles.accessor<double, 2>();
  for (int64_t p = 0; p < persons; ++p) {
    const double* row = mass + p * kAbilityGridPoints;
    q[p][0] = histogram_quantile(row, 0.025);
    q[p][1] = histogram_quantile(row, 0.5);
    q[p][2] = histogram_quantile(row, 0.975);
  }

  PersonScores scores;
  scores.person_ids = data.person_ids;
  if (scores.person_ids.empty())
    for (int64_t p = 0; p < persons; ++p) scores.person_ids.push_back(std::to_string(p + 1));
  scores.summary = torch::stack({mean, sd}, 1);
  scores.summary = torch::cat({scores.summary, quantiles}, 1);
  scores.plausible_values = torch::empty({persons, 0}, torch::kFloat64);
  if (options.plausible_values > 0) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(models::mix_seed(options.seed, 0x50565353ULL));
    const auto cells = torch::multinomial(mixture, options.plausible_values, true, generator);
    const auto jitter = torch::rand({persons, options.plausible_values}, generator, torch::kFloat64) - 0.5;
    scores.plausible_values = grid.index({cells}) + jitter * kGridStep;
  }
  return scores;
}

std::string PersonScores::to_csv() const {
  std::string out = "person,theta_mean,theta_sd,theta_q2.5,theta_q50,theta_q97.5";
  const int64_t values = plausible_values.size(1);
  for (int64_t m = 1; m <= values; ++m) out += ",pv" + std::to_string(m);
  out += "\n";
  const auto s = summary.accessor<double, 2>();
  const auto pv = plausible_values.accessor<double, 2>();
  for (int64_t p = 0; p < s.size(0); ++p) {
    out += csv_field(person_ids[static_cast<size_t>(p)]);
    for (int64_t k = 0; k < 5; ++k) {
      out += ',';
      append_number(out, s[p][k], 10);
    }
    for (int64_t m = 0; m < values; ++m) {
      out += ',';
      append_number(out, pv[p][m], 10);
    }
    out += '\n';
  }
  return out;
}

}  // namespace bfhpo::inference
