#include "hpo/tpe/tpe_sampler.hpp"

#include "hpo/latin_hypercube.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/study_objectives.hpp"
#include "hpo/tpe/multi_objective_split.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace bfhpo::hpo {
namespace {

// bfhpo's bandwidth rule besides the spread (see tpe_sampler.hpp).
constexpr double kBelowClipShareOfTrials = 0.25;
// Budgets from here on get the defaults measured at 100 trials.
constexpr int kFullBudget = 100;
constexpr int kFewestStartupTrials = 4;
constexpr double kAboveBandwidthScale = 0.85;
constexpr double kMixedSpaceAboveBandwidthScale = 0.7;
constexpr double kMinBandwidthSteps = 0.5;
// mixed_space_prior: the prior kernel's weight in a space with a categorical
// parameter, from this budget on (and for an unknown one); at 25 trials and
// below, 1, with a linear ramp between.
constexpr double kMixedSpacePriorWeight = 2.0;
constexpr int kMixedSpacePriorFullFrom = 50;

using Group = std::vector<const ParamSpec*>;

// Parameters with the same chain of conditions exist together.
std::string condition_key(const SearchSpace& space, const ParamSpec& spec) {
  if (!spec.condition) return "";
  const ParamSpec* parent = space.find(spec.condition->parent);
  return condition_key(space, *parent) + "/" + spec.condition->parent + "=" + nlohmann::json(spec.condition->values).dump();
}

std::vector<Group> decompose(const SearchSpace& space, bool group) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& spec : space.params()) {
    const std::string key = group ? condition_key(space, spec) : spec.name;
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = groups.size();
      groups.push_back({&spec});
    } else {
      groups[it->second].push_back(&spec);
    }
  }
  return groups;
}

// The classes of the ranking, best first.
enum RankClass { kComplete = 0, kPruned = 1, kInfeasible = 2, kRunning = 3 };

struct Ranked {
  const FrozenTrial* trial;
  std::tuple<int, double, double> key;  // (RankClass, ...), smaller is better
};

// Optuna's score of an infeasible trial: the sum of its positive constraint values (0: feasible).
double total_violation(const FrozenTrial& trial) {
  double sum = 0.0;
  for (double v : constraint_values(trial))
    if (v > 0.0) sum += v;
  return sum;
}

// std::string::compare (bytes as unsigned char, then length), inline: a
// parameter's name is short, and a call into memcmp per name and trial costs
// more than the comparison.
int compare_name(const std::string& a, const std::string& b) {
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i)
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
  return a.size() < b.size() ? -1 : static_cast<int>(a.size() > b.size());
}

// The internal values of the space's parameters in each ranked trial, read in
// one merge pass over each trial's (sorted) params instead of a map lookup per
// parameter and group.
struct ObservedValues {
  // ranked trial x space parameter, a trial's values side by side
  Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> values;
  Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> present;

  ObservedValues(const SearchSpace& space, const std::vector<Ranked>& ranked) {
    const auto& specs = space.params();
    std::vector<std::size_t> by_name(specs.size());
    std::iota(by_name.begin(), by_name.end(), 0);
    std::sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) { return specs[a].name < specs[b].name; });
    const auto rows = static_cast<Eigen::Index>(ranked.size()), cols = static_cast<Eigen::Index>(specs.size());
    values.setZero(rows, cols);
    present.setConstant(rows, cols, false);
    // kLanes trials side by side: their walks through the map nodes are
    // independent, so the memory loads of one overlap those of the others.
    constexpr Eigen::Index kLanes = 4;
    for (Eigen::Index first = 0; first < rows; first += kLanes) {
      const Eigen::Index lanes = std::min(kLanes, rows - first);
      std::array<Params::const_iterator, kLanes> it, end;
      for (Eigen::Index lane = 0; lane < lanes; ++lane) {
        it[lane] = ranked[first + lane].trial->params.begin();
        end[lane] = ranked[first + lane].trial->params.end();
      }
      for (std::size_t col : by_name) {
        for (Eigen::Index lane = 0; lane < lanes; ++lane) {
          int order = 1;  // of the trial's current name against the parameter's; one comparison per step
          while (it[lane] != end[lane] && (order = compare_name(it[lane]->first, specs[col].name)) < 0) ++it[lane];
          if (order != 0) continue;
          values(first + lane, static_cast<Eigen::Index>(col)) = it[lane]->second;
          present(first + lane, static_cast<Eigen::Index>(col)) = true;
          // Names are unique: the next parameter starts at the next node,
          // fetched while the other lanes work.
          if (++it[lane] != end[lane]) __builtin_prefetch(&*it[lane]);
        }
      }
    }
  }
};

}  // namespace

TpeOptions optuna31_tpe_options() {
  TpeOptions o;
  o.startup = StartupDesign::Random;
  o.bandwidth_from_spread = false;
  o.below_weights = BelowWeights::Optuna;
  o.optuna31_kernel_scale = true;
  o.budget_aware = false;
  o.gamma_share = 0.1;
  o.liar_weights = LiarWeights::Optuna;
  o.discrete_widths = false;
  o.mixed_space_prior = false;
  o.gamma_share_multi_objective = 0.1;
  return o;
}

double tpe_liar_weight(int n_running) { return 1.0 / (1.0 + n_running); }

int tpe_gamma(int n, double share) { return std::min(static_cast<int>(std::ceil(share * n)), 25); }

int tpe_gamma_multi_objective(int n, double share) { return static_cast<int>(std::ceil(share * n)); }

int tpe_startup_count(const TpeOptions& options) {
  if (!options.budget_aware || options.n_trials <= 0) return options.n_startup_trials;
  const int planned = static_cast<int>(std::lround(options.n_trials / 10.0));
  return std::clamp(planned, std::min(kFewestStartupTrials, options.n_startup_trials), options.n_startup_trials);
}

double tpe_mixed_space_prior_scale(const TpeOptions& options) {
  if (!options.mixed_space_prior) return 1.0;
  if (!options.budget_aware || options.n_trials <= 0 || options.n_trials >= kMixedSpacePriorFullFrom)
    return kMixedSpacePriorWeight;
  constexpr int kRampFrom = kMixedSpacePriorFullFrom / 2;
  const double t = std::max(0, options.n_trials - kRampFrom) / static_cast<double>(kMixedSpacePriorFullFrom - kRampFrom);
  return 1.0 + t * (kMixedSpacePriorWeight - 1.0);
}

double tpe_below_clip_share(const TpeOptions& options) {
  if (!options.budget_aware || options.n_trials <= 0 || options.n_trials >= kFullBudget)
    return kBelowClipShareOfTrials;
  return kBelowClipShareOfTrials * std::sqrt(static_cast<double>(kFullBudget) / options.n_trials);
}

Eigen::ArrayXd tpe_default_weights(int n) {
  if (n <= 0) return Eigen::ArrayXd();
  if (n < 25) return Eigen::ArrayXd::Ones(n);
  Eigen::ArrayXd w(n);
  w.head(n - 25) = Eigen::ArrayXd::LinSpaced(n - 25, 1.0 / n, 1.0);
  w.tail(25) = 1.0;
  return w;
}

Eigen::ArrayXd tpe_improvement_weights(const Eigen::ArrayXd& values, double threshold) {
  Eigen::ArrayXd w = threshold - values;
  const double largest = w.size() ? w.maxCoeff() : 0.0;
  if (!(largest > 0.0) || !std::isfinite(largest)) return Eigen::ArrayXd::Ones(values.size());
  w = w.max(1e-12 * largest);
  return w / w.mean();
}

Proposal TpeSampler::sample(const SampleRequest& request) {
  std::mt19937_64 rng(request.rng_seed());
  const bool multi_objective = request.directions.size() > 1;
  int finished = 0;
  for (const auto& t : request.trials)
    finished += t.state == TrialState::Complete || t.state == TrialState::Pruned;
  const int n_startup = multi_objective ? options_.n_startup_trials : tpe_startup_count(options_);
  if (finished < n_startup) {
    Proposal p;
    const StartupDesign design =
        options_.startup.value_or(multi_objective ? StartupDesign::Random : StartupDesign::LatinHypercube);
    if (design == StartupDesign::LatinHypercube) {
      p.params = latin_hypercube_point(request.space, n_startup, request.study_seed,
                                       request.trial_number, rng);
      p.note = "startup latin hypercube";
    } else {
      p.params = RandomSampler::draw(request.space, rng);
      p.note = "startup random";
    }
    return p;
  }

  // With several objectives each parameter is sampled on its own.
  const bool independent = multi_objective;
  // A pruned trial's intermediate values follow the first objective.
  const double sign = request.directions.front() == StudyDirection::Maximize ? -1.0 : 1.0;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Ranked> ranked;
  std::vector<std::vector<double>> losses;  // per row of `ranked`; with several objectives, a COMPLETE trial's
  for (const auto& t : request.trials) {
    const bool finished = t.state == TrialState::Complete || t.state == TrialState::Pruned;
    if (const double violation = finished ? total_violation(t) : 0.0; violation > 0.0) {
      ranked.push_back({&t, {kInfeasible, violation, 0.0}});
    } else if (t.state == TrialState::Complete && multi_objective) {
      std::vector<double> loss = loss_values(t, request.directions);
      if (loss.empty() || std::any_of(loss.begin(), loss.end(), [](double v) { return std::isnan(v); })) continue;
      ranked.push_back({&t, {kComplete, 0.0, 0.0}});
      losses.resize(ranked.size());
      losses.back() = std::move(loss);
    } else if (t.state == TrialState::Complete && t.value() && !std::isnan(*t.value())) {
      ranked.push_back({&t, {kComplete, sign * *t.value(), 0.0}});
    } else if (t.state == TrialState::Pruned) {
      if (t.intermediate_values.empty()) ranked.push_back({&t, {kPruned, inf, 0.0}});
      else {
        auto last = t.intermediate_values.rbegin();
        double v = std::isnan(last->second) ? inf : sign * last->second;
        ranked.push_back({&t, {kPruned, -static_cast<double>(last->first), v}});
      }
    } else if (t.state == TrialState::Running && options_.constant_liar && !t.params.empty()) {
      ranked.push_back({&t, {kRunning, 0.0, 0.0}});
    }
  }

  const int n_candidates = options_.n_ei_candidates;
  std::vector<Params> candidates(n_candidates);
  Eigen::ArrayXd scores = Eigen::ArrayXd::Zero(n_candidates);
  std::vector<std::vector<double>> group_scores;  // per group, per candidate
  std::vector<Group> groups = decompose(request.space, options_.group && !independent);
  tpe::ParzenOptions parzen;
  parzen.multivariate = options_.multivariate && !independent;
  parzen.consider_magic_clip = options_.consider_magic_clip;
  parzen.consider_endpoints = options_.consider_endpoints;
  parzen.prior_weight = options_.prior_weight;
  parzen.bandwidth_from_spread = options_.bandwidth_from_spread;
  parzen.optuna31_kernel_scale = options_.optuna31_kernel_scale;
  const bool bfhpo_widths = parzen.multivariate && options_.bandwidth_from_spread;
  const bool discrete_widths = bfhpo_widths && options_.discrete_widths;
  if (discrete_widths) parzen.min_bandwidth_steps = kMinBandwidthSteps;
  const bool mixed_space = std::any_of(request.space.params().begin(), request.space.params().end(), [](const ParamSpec& p) {
    return std::holds_alternative<CategoricalDistribution>(p.distribution);
  });

  // Only while no other trial runs: with several workers the liars already
  // spread the proposals (measured: with 4 workers the doubled prior lost).
  const bool others_running = std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) {
    return r.trial->state == TrialState::Running;
  });
  if (mixed_space && !others_running) parzen.prior_weight *= tpe_mixed_space_prior_scale(options_);

  const ObservedValues observed_values(request.space, ranked);
  std::vector<Eigen::Index> ranked_order;  // rows of `ranked`, best first, ties in row order
  {
    std::vector<std::pair<std::tuple<int, double, double>, Eigen::Index>> keyed(ranked.size());
    for (std::size_t row = 0; row < ranked.size(); ++row) keyed[row] = {ranked[row].key, static_cast<Eigen::Index>(row)};
    std::sort(keyed.begin(), keyed.end());
    ranked_order.reserve(keyed.size());
    for (const auto& entry : keyed) ranked_order.push_back(entry.second);
  }

  std::vector<Eigen::Index> by_number(ranked.size());  // rows of `ranked` in trial-number order
  std::iota(by_number.begin(), by_number.end(), 0);
  const auto number_less = [&](Eigen::Index a, Eigen::Index b) { return ranked[a].trial->number < ranked[b].trial->number; };
  if (!std::is_sorted(by_number.begin(), by_number.end(), number_less))
    std::sort(by_number.begin(), by_number.end(), number_less);

  // With several objectives: of the COMPLETE rows that lead `observed`,
  // those multi_objective_below picks move to its front, the others keep their order.
  const auto order_multi_objective = [&](std::vector<Eigen::Index>& observed, int n_below) {
    const auto first_other = std::find_if(observed.begin(), observed.end(), [&](Eigen::Index row) {
      return std::get<0>(ranked[row].key) != kComplete;
    });
    const auto n_complete = static_cast<std::size_t>(first_other - observed.begin());
    const int k = std::min(n_below, static_cast<int>(n_complete));
    if (k == 0 || k == static_cast<int>(n_complete)) return;
    tpe::LossPoints points;
    for (auto it = observed.begin(); it != first_other; ++it) points.push_back(losses[static_cast<std::size_t>(*it)]);
    std::vector<bool> picked(n_complete, false);
    for (int i : tpe::multi_objective_below(points, k)) picked[static_cast<std::size_t>(i)] = true;
    std::vector<Eigen::Index> complete_rows(observed.begin(), first_other);
    auto out = observed.begin();
    for (bool below : {true, false})
      for (std::size_t i = 0; i < n_complete; ++i)
        if (picked[i] == below) *out++ = complete_rows[i];
  };

  for (const Group& group : groups) {
    std::vector<Eigen::Index> columns;
    for (const ParamSpec* p : group)
      columns.push_back(static_cast<Eigen::Index>(p - request.space.params().data()));
    std::vector<Eigen::Index> observed;  // rows of `ranked` with every parameter of the group, best first
    for (Eigen::Index row : ranked_order)
      if (std::all_of(columns.begin(), columns.end(), [&](Eigen::Index c) { return observed_values.present(row, c); }))
        observed.push_back(row);
    const int n = static_cast<int>(observed.size());
    const int n_not_running = static_cast<int>(std::count_if(observed.begin(), observed.end(), [&](Eigen::Index row) {
      return ranked[row].trial->state != TrialState::Running;
    }));
    const int n_below = std::min(multi_objective ? tpe_gamma_multi_objective(n_not_running, options_.gamma_share_multi_objective)
                                                 : tpe_gamma(n_not_running, options_.gamma_share),
                                 n);  // liars never shrink or join "below"
    const auto complete = [&](Eigen::Index row) { return std::get<0>(ranked[row].key) == kComplete; };
    if (multi_objective) order_multi_objective(observed, n_below);
    const bool weigh_improvement = options_.below_weights == BelowWeights::Improvement && n_below < n &&
                                   std::all_of(observed.begin(), observed.begin() + n_below + (multi_objective ? 0 : 1),
                                               complete);
    auto fit = [&](int from, int to, const tpe::ParzenOptions& options) {
      std::vector<bool> in_part(ranked.size(), false);
      for (int i = from; i < to; ++i) in_part[observed[i]] = true;
      std::vector<Eigen::Index> part;  // in trial-number order
      for (Eigen::Index row : by_number)
        if (in_part[row]) part.push_back(row);
      Eigen::ArrayXXd obs(static_cast<Eigen::Index>(part.size()), static_cast<Eigen::Index>(group.size()));
      Eigen::ArrayXd values(static_cast<Eigen::Index>(part.size()));  // signed: smaller is better
      for (std::size_t i = 0; i < part.size(); ++i) {
        for (std::size_t d = 0; d < group.size(); ++d) obs(i, d) = observed_values.values(part[i], columns[d]);
        values[i] = std::get<1>(ranked[part[i]].key);
      }
      std::vector<Distribution> dims;
      for (const ParamSpec* p : group) dims.push_back(p->distribution);
      Eigen::ArrayXd weights;
      if (from == 0 && multi_objective) {
        tpe::LossPoints below_losses;
        for (Eigen::Index row : part) below_losses.push_back(losses[row]);
        weights = weigh_improvement ? tpe::hypervolume_contribution_weights(below_losses)
                                    : Eigen::ArrayXd::Ones(static_cast<Eigen::Index>(part.size()));
      } else {
        weights = from == 0 && weigh_improvement
                      ? tpe_improvement_weights(values, std::get<1>(ranked[observed[n_below]].key))
                      : tpe_default_weights(static_cast<int>(part.size()));
      }
      if (options_.liar_weights == LiarWeights::Batch)
        for (std::size_t i = 0; i < part.size(); ++i)
          if (ranked[part[i]].trial->state == TrialState::Running) weights[i] *= tpe_liar_weight(n - n_not_running);
      return tpe::ParzenEstimator(dims, obs, weights, options);
    };
    tpe::ParzenOptions below_options = parzen, above_options = parzen;
    if (bfhpo_widths) {
      below_options.clip_count = tpe_below_clip_share(options_) * n_not_running;
      above_options.bandwidth_scale =
          discrete_widths && mixed_space ? kMixedSpaceAboveBandwidthScale : kAboveBandwidthScale;
    }
    const tpe::ParzenEstimator below = fit(0, n_below, below_options);
    const tpe::ParzenEstimator above = fit(n_below, n, above_options);
    const Eigen::ArrayXXd drawn = below.sample(n_candidates, rng);
    const Eigen::ArrayXd score = below.log_pdf(drawn) - above.log_pdf(drawn);
    group_scores.emplace_back(score.data(), score.data() + score.size());
    for (int c = 0; c < n_candidates; ++c)
      for (std::size_t d = 0; d < group.size(); ++d) candidates[c][group[d]->name] = drawn(c, d);
  }

  // Conditional groups are left out of the candidates' scores: their
  // log-ratio, positive on average for draws from l(x), would favour the
  // choices that activate them (on hpo_mixed: sgd, and runs stuck on it).
  const auto& specs = request.space.params();
  std::vector<int> best_draw_of(specs.size(), -1);  // per parameter; -1: in an unconditional group
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].front()->condition && !independent) {
      for (int c = 0; c < n_candidates; ++c) scores[c] += group_scores[g][c];
      continue;
    }
    const auto& s = group_scores[g];
    const int best_draw = static_cast<int>(std::max_element(s.begin(), s.end()) - s.begin());
    for (const ParamSpec* p : groups[g]) best_draw_of[static_cast<std::size_t>(p - specs.data())] = best_draw;
  }
  const auto activated = [&](int c, bool best_draws) {
    Params active;
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (request.space.is_active(specs[i], active))
        active[specs[i].name] = candidates[best_draws && best_draw_of[i] >= 0 ? best_draw_of[i] : c].at(specs[i].name);
    return active;
  };
  std::vector<Params> chosen(n_candidates);
  std::vector<bool> feasible(n_candidates, true);
  for (int c = 0; c < n_candidates; ++c) {
    chosen[c] = activated(c, true);
    if (request.feasible && !request.feasible(chosen[c])) {
      Params own = activated(c, false);
      feasible[c] = request.feasible(own);
      if (feasible[c]) chosen[c] = std::move(own);
    }
  }

  int best = -1;
  for (int c = 0; c < n_candidates; ++c) {
    if (!feasible[c]) continue;
    if (best < 0 || scores[c] > scores[best]) best = c;
  }
  if (best >= 0) {
    Proposal p;
    p.params = chosen[best];
    p.note = "tpe";
    return p;
  }
  Proposal fallback = RandomSampler::draw_feasible(request, rng);
  fallback.all_candidates_vetoed = true;
  if (!fallback.feasible) {
    Eigen::Index top;
    scores.maxCoeff(&top);
    fallback.params = chosen[top];
  }
  fallback.note = "all " + std::to_string(n_candidates) + " TPE candidates were infeasible; " +
                  (fallback.feasible ? "a feasible random draw" : "no feasible draw found either");
  return fallback;
}

}  // namespace bfhpo::hpo
