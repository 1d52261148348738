#include "hpo/random_sampler.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/tpe/tpe_sampler.hpp"
#include "hpo/tpe/truncated_normal.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace bfhpo::hpo;
using nlohmann::json;

namespace {

SearchSpace conditional_space() {
  return SearchSpace::from_json(json::parse(R"({
    "x":     {"type": "float", "low": -5, "high": 5},
    "lr":    {"type": "float", "low": 1e-4, "high": 1e-1, "log": true},
    "drop":  {"type": "float", "low": 0, "high": 0.5, "step": 0.1},
    "n":     {"type": "int", "low": 1, "high": 64, "log": true},
    "k":     {"type": "int", "low": 0, "high": 10, "step": 2},
    "kind":  {"type": "categorical", "choices": ["a", "b", "c"]},
    "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}}})"), "test");
}

SearchSpace plane() {
  return SearchSpace::from_json(json::parse(R"({
    "x": {"type": "float", "low": -5, "high": 5}, "y": {"type": "float", "low": -5, "high": 5}})"), "test");
}

FrozenTrial finished(const SearchSpace& space, int number, Params params, double value) {
  FrozenTrial t;
  t.number = t.trial_id = number;
  t.state = TrialState::Complete;
  t.values = {value};
  t.params = std::move(params);
  for (const auto& p : space.params()) t.distributions[p.name] = p.distribution;
  return t;
}

// Best value after n trials of minimising f with `sampler`.
template <class F>
double run(Sampler& sampler, const SearchSpace& space, F f, int n, std::uint64_t seed,
           StudyDirection direction = StudyDirection::Minimize) {
  std::vector<FrozenTrial> trials;
  double best = direction == StudyDirection::Minimize ? INFINITY : -INFINITY;
  for (int i = 0; i < n; ++i) {
    Params p = sampler.sample({space, trials, {direction}, seed, i, {}}).params;
    REQUIRE(space.is_valid_assignment(p));
    double v = f(p);
    best = direction == StudyDirection::Minimize ? std::min(best, v) : std::max(best, v);
    trials.push_back(finished(space, i, p, v));
  }
  return best;
}

double sphere(const Params& p) { return p.at("x") * p.at("x") + p.at("y") * p.at("y"); }

// The proposals of an n-trial study minimising the sphere on plane(), one trial at a time.
std::vector<Params> plane_sphere_proposals(Sampler& sampler, int n, std::uint64_t seed) {
  const SearchSpace space = plane();
  std::vector<FrozenTrial> trials;
  std::vector<Params> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(sampler.sample({space, trials, {StudyDirection::Minimize}, seed, i, {}}).params);
    trials.push_back(finished(space, i, out.back(), sphere(out.back())));
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("the true mixture density integrates to one, the normal mass is accurate in the tails") {
  // optuna31_kernel_scale off: each kernel is a normalised truncated normal, so the mixture is a density.
  std::vector<Distribution> dims{FloatDistribution{-1.0, 2.0, false, std::nullopt}};
  Eigen::ArrayXXd observations(4, 1);
  observations << 0.3, -0.9, 1.2, 1.9;
  tpe::ParzenOptions options;
  options.optuna31_kernel_scale = false;
  tpe::ParzenEstimator estimator(dims, observations, Eigen::ArrayXd::Ones(4), options);
  const int cells = 30000;
  const double dx = 3.0 / cells;
  Eigen::ArrayXXd grid(cells, 1);
  for (int i = 0; i < cells; ++i) grid(i, 0) = -1.0 + (i + 0.5) * dx;
  CHECK(estimator.log_pdf(grid).exp().sum() * dx == Approx(1.0).epsilon(1e-4));
  CHECK(std::exp(tpe::log_gauss_mass(-1, 1)) == Approx(0.6826894921));
  // Far tails keep precision: the mass above 10 sigma is about 7.6e-24.
  CHECK(tpe::log_gauss_mass(10, INFINITY) == Approx(std::log(7.61985302416e-24)).epsilon(1e-6));
}

TEST_CASE("kernel masses too small to multiply over many dimensions still give the exact mixture density") {
  // One observation far right of [-1, 1] in 40 dimensions: its kernel keeps
  // about 1e-9 of its mass in each, 1e-360 over all, below the doubles.
  const int dims = 40;
  std::vector<Distribution> space(dims, FloatDistribution{-1.0, 1.0, false, std::nullopt});
  tpe::ParzenOptions options;
  options.optuna31_kernel_scale = false;
  const tpe::ParzenEstimator estimator(space, Eigen::ArrayXXd::Constant(1, dims, 5.0), Eigen::ArrayXd::Ones(1), options);
  const double x = 1.0;
  // Reference, one term at a time: two kernels of weight 1/2, the observation's
  // (sigma clipped to range / 3) and the prior (mean 0, sigma the range).
  const auto kernel = [&](double mu, double sigma) {
    const double h = std::sqrt(0.5);
    const double mass = mu > 1.0 ? 0.5 * (std::erfc((mu - 1.0) / sigma * h) - std::erfc((mu + 1.0) / sigma * h))
                                 : 1.0 - std::erfc(1.0 / sigma * h);
    const double z = (x - mu) / sigma;
    return dims * (-0.5 * std::log(2 * M_PI) - std::log(sigma) - 0.5 * z * z - std::log(mass));
  };
  const double observed = kernel(5.0, 2.0 / 3.0), prior = kernel(0.0, 2.0);
  const double expected = std::log(0.5) + observed + std::log1p(std::exp(prior - observed));
  const double got = estimator.log_pdf(Eigen::ArrayXXd::Constant(1, dims, x))[0];
  CHECK(got == Approx(expected).epsilon(1e-12));
}

TEST_CASE("weights ramp and gamma follow Optuna") {
  CHECK(tpe_gamma(1) == 1);
  CHECK(tpe_gamma(100) == 10);
  CHECK(tpe_gamma(1000) == 25);
  CHECK((tpe_default_weights(10) == 1.0).all());
  Eigen::ArrayXd w = tpe_default_weights(30);
  CHECK(w[0] == Approx(1.0 / 30));
  CHECK(w[4] == Approx(1.0));
  CHECK((w.tail(25) == 1.0).all());
}

TEST_CASE("gamma: Optuna's best 10%, bfhpo's best 15%, both rounded up and at most 25") {
  // ceil(share * n) as Python's math.ceil gives it for these n.
  CHECK(tpe_gamma(10, 0.15) == 2);
  CHECK(tpe_gamma(20, 0.15) == 3);
  CHECK(tpe_gamma(25, 0.15) == 4);
  CHECK(tpe_gamma(50, 0.15) == 8);
  CHECK(tpe_gamma(100, 0.15) == 15);
  CHECK(tpe_gamma(200, 0.15) == 25);
  CHECK(TpeOptions{}.gamma_share == 0.15);
  CHECK(optuna31_tpe_options().gamma_share == 0.1);
}

TEST_CASE("budget aware: fewer startup trials and a narrower clip below 100 trials, nothing changes from 100 on") {
  const auto with = [](int n_trials, int n_startup_trials = 10, bool budget_aware = true) {
    TpeOptions o;
    o.n_trials = n_trials;
    o.n_startup_trials = n_startup_trials;
    o.budget_aware = budget_aware;
    return o;
  };
  CHECK(tpe_startup_count(with(25)) == 4);   // round(2.5) = 3, raised to 4
  CHECK(tpe_startup_count(with(50)) == 5);
  CHECK(tpe_startup_count(with(70)) == 7);
  CHECK(tpe_startup_count(with(100)) == 10);
  CHECK(tpe_startup_count(with(1000)) == 10);  // never more than n_startup_trials
  CHECK(tpe_startup_count(with(0)) == 10);     // budget not known
  CHECK(tpe_startup_count(with(25, 2)) == 2);  // never more than the user asked for
  CHECK(tpe_startup_count(with(1000, 20)) == 20);
  CHECK(tpe_startup_count(with(25, 10, false)) == 10);
  CHECK(tpe_startup_count(optuna31_tpe_options()) == 10);

  CHECK(tpe_below_clip_share(with(25)) == Approx(0.5).epsilon(1e-15));  // 0.25 * sqrt(4)
  CHECK(tpe_below_clip_share(with(50)) == Approx(0.25 * std::sqrt(2.0)).epsilon(1e-15));
  for (int n : {0, 100, 101, 1000}) CHECK(tpe_below_clip_share(with(n)) == 0.25);
  CHECK(tpe_below_clip_share(with(25, 10, false)) == 0.25);
  double previous = tpe_below_clip_share(with(1));
  for (int n = 2; n <= 120; ++n) {
    CHECK(tpe_below_clip_share(with(n)) <= previous);
    previous = tpe_below_clip_share(with(n));
  }
}

TEST_CASE("the study's n_trials reaches the sampler: a short study leaves the startup sooner and proposes otherwise") {
  const json space = json::parse(R"({"x": {"type": "float", "low": -5, "high": 5},
                                     "y": {"type": "float", "low": -5, "high": 5}})");
  const SearchSpace plane_space = plane();
  const auto run_study = [&](int n_trials, json sampler_section) {
    sampler_section["type"] = "tpe";
    const StudySpec spec = parse_study_spec(
        {{"name", "s"}, {"seed", 5}, {"n_trials", n_trials}, {"sampler", sampler_section}, {"search_space", space}},
        "s.json");
    auto sampler = make_sampler(spec);
    std::vector<FrozenTrial> trials;
    std::vector<Proposal> out;
    for (int i = 0; i < 12; ++i) {
      out.push_back(sampler->sample({plane_space, trials, {StudyDirection::Minimize}, 5, i, {}}));
      trials.push_back(finished(plane_space, i, out.back().params, sphere(out.back().params)));
    }
    return out;
  };
  const auto params = [](const std::vector<Proposal>& proposals) {
    std::vector<Params> out;
    for (const auto& p : proposals) out.push_back(p.params);
    return out;
  };
  const auto short_study = run_study(25, json::object());
  CHECK(short_study[3].note == "startup latin hypercube");
  CHECK(short_study[4].note == "tpe");
  CHECK(run_study(25, {{"budget_aware", false}})[9].note == "startup latin hypercube");
  // With the same 4 startup trials, only the clip's share tells 25 from 100 trials.
  const json four = {{"n_startup_trials", 4}};
  CHECK(params(run_study(25, four)) != params(run_study(100, four)));
  CHECK(params(run_study(100, four)) == params(run_study(400, four)));
  json four_unaware = four;
  four_unaware["budget_aware"] = false;
  CHECK(params(run_study(25, four_unaware)) == params(run_study(100, four)));
}

TEST_CASE("improvement weights: threshold - value, the best trial weighs most, mean 1, never zero") {
  Eigen::ArrayXd values(3);
  values << 1.0, 3.0, 2.0;
  const Eigen::ArrayXd w = tpe_improvement_weights(values, 4.0);
  CHECK(w[0] == Approx(1.5));
  CHECK(w[1] == Approx(0.5));
  CHECK(w[2] == Approx(1.0));
  // Signed values of a maximised study are negative; only the differences count.
  CHECK((tpe_improvement_weights(values - 10.0, -6.0) - w).abs().maxCoeff() < 1e-12);
  // Nothing improves on the threshold: equal weights.
  CHECK((tpe_improvement_weights(Eigen::ArrayXd::Constant(3, 2.0), 2.0) == 1.0).all());
  // A trial tied with the threshold keeps a tiny positive weight, so its kernel's log weight is finite.
  Eigen::ArrayXd tied(2);
  tied << 0.0, 4.0;
  const Eigen::ArrayXd t = tpe_improvement_weights(tied, 4.0);
  CHECK(t[1] > 0.0);
  CHECK(t[1] < 1e-9 * t[0]);
}

namespace {

// The bandwidth of a 1-D estimator on [-5, 5] with `observations`, read off its true density around the first
// observation: with a negligible prior kernel and the kernels all at one place,
// log p(x0 + d) - log p(x0) = -d^2 / (2 sigma^2).
double kernel_bandwidth(const Eigen::ArrayXd& observations, tpe::ParzenOptions options) {
  options.prior_weight = 1e-15;
  options.optuna31_kernel_scale = false;
  const std::vector<Distribution> dims{FloatDistribution{-5, 5, false, std::nullopt}};
  const tpe::ParzenEstimator estimator(dims, observations, Eigen::ArrayXd::Ones(observations.size()), options);
  const double d = 0.05;
  Eigen::ArrayXXd points(2, 1);
  points << observations[0], observations[0] + d;
  const Eigen::ArrayXd log_p = estimator.log_pdf(points);
  return d / std::sqrt(-2.0 * (log_p[1] - log_p[0]));
}

}  // namespace

TEST_CASE("the magic clip divides the range by 1 + the estimator's kernels, or by 1 + clip_count when set") {
  const Eigen::ArrayXd agreeing = Eigen::ArrayXd::Zero(3);  // spread 0: the clip alone sets the bandwidth
  tpe::ParzenOptions optuna_clip, counted_clip;
  counted_clip.clip_count = 25.0;
  CHECK(kernel_bandwidth(agreeing, optuna_clip) == Approx(10.0 / 5).epsilon(1e-6));  // 3 observations + prior
  CHECK(kernel_bandwidth(agreeing, counted_clip) == Approx(10.0 / 26).epsilon(1e-6));
  counted_clip.clip_count = 500.0;  // the clip never narrows below range / 100
  CHECK(kernel_bandwidth(agreeing, counted_clip) == Approx(10.0 / 100).epsilon(1e-6));
}

TEST_CASE("bandwidth_scale multiplies the multivariate bandwidth") {
  const Eigen::ArrayXd one = Eigen::ArrayXd::Zero(1);  // one observation: Optuna's 0.2 * range
  tpe::ParzenOptions plain, scaled;
  plain.consider_magic_clip = scaled.consider_magic_clip = false;
  scaled.bandwidth_scale = 0.85;
  CHECK(kernel_bandwidth(one, plain) == Approx(2.0).epsilon(1e-6));
  CHECK(kernel_bandwidth(one, scaled) == Approx(0.85 * 2.0).epsilon(1e-6));
}

TEST_CASE("below weights: by improvement by default, Optuna's where a pruned trial is among the below trials") {
  SearchSpace space = plane();
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 30; ++i)
    trials.push_back(finished(space, i, {{"x", -4.5 + 0.3 * i}, {"y", 2.0 - 0.1 * i}}, 1.0 + (i * 7) % 30));
  TpeOptions optuna_weights;
  optuna_weights.below_weights = BelowWeights::Optuna;
  TpeSampler by_improvement, equal(optuna_weights);
  const auto proposal = [&](TpeSampler& sampler) {  // for ten seeds
    std::vector<Params> out;
    for (std::uint64_t seed = 0; seed < 10; ++seed)
      out.push_back(sampler.sample({space, trials, {StudyDirection::Minimize}, seed, 30, {}}).params);
    return out;
  };
  CHECK(proposal(by_improvement) != proposal(equal));
  // All but two trials pruned: the third below trial (gamma(30) = 3) and the threshold are pruned, ranked by
  // (later step, last intermediate value), a key that is not on the values' scale.
  trials[0].values = {-50.0};
  trials[1].values = {-40.0};
  for (int i = 2; i < 30; ++i) {
    trials[i].state = TrialState::Pruned;
    trials[i].intermediate_values[1] = *trials[i].value();
    trials[i].values.clear();
  }
  CHECK(proposal(by_improvement) == proposal(equal));
}

TEST_CASE("the sampler section's preset sets every default and each key overrides it") {
  const json space = json::parse(R"({"x": {"type": "float", "low": -5, "high": 5},
                                     "y": {"type": "float", "low": -5, "high": 5}})");
  const auto proposals = [](Sampler& sampler) { return plane_sphere_proposals(sampler, 16, 2); };
  const auto from_section = [&](const json& sampler_section) {
    const StudySpec spec = parse_study_spec({{"name", "s"}, {"seed", 2}, {"sampler", sampler_section}, {"search_space", space}}, "s.json");
    return proposals(*make_sampler(spec));
  };
  TpeSampler bfhpo_defaults, optuna31(optuna31_tpe_options());
  TpeOptions optuna_but_improvement = optuna31_tpe_options();
  optuna_but_improvement.below_weights = BelowWeights::Improvement;
  TpeSampler mixed(optuna_but_improvement);
  CHECK(from_section({{"type", "tpe"}}) == proposals(bfhpo_defaults));
  CHECK(from_section({{"type", "tpe"}, {"preset", "optuna"}}) == proposals(optuna31));
  CHECK(from_section({{"type", "tpe"}, {"preset", "optuna"}, {"weights", "improvement"}}) == proposals(mixed));
  CHECK(proposals(optuna31) != proposals(bfhpo_defaults));
  CHECK(proposals(mixed) != proposals(optuna31));
  TpeOptions optuna_but_gamma = optuna31_tpe_options();
  optuna_but_gamma.gamma_share = 0.15;
  TpeSampler optuna_with_bfhpo_gamma(optuna_but_gamma);
  CHECK(from_section({{"type", "tpe"}, {"preset", "optuna"}, {"gamma", "bfhpo"}}) == proposals(optuna_with_bfhpo_gamma));
  CHECK(proposals(optuna_with_bfhpo_gamma) != proposals(optuna31));
  TpeOptions bfhpo_but_gamma;
  bfhpo_but_gamma.gamma_share = 0.1;
  TpeSampler bfhpo_with_optuna_gamma(bfhpo_but_gamma);
  CHECK(from_section({{"type", "tpe"}, {"gamma", "optuna"}}) == proposals(bfhpo_with_optuna_gamma));
  CHECK(proposals(bfhpo_with_optuna_gamma) != proposals(bfhpo_defaults));
}

TEST_CASE("every proposal is a valid assignment of a conditional space, startup and TPE alike") {
  SearchSpace space = conditional_space();
  TpeSampler tpe;
  auto f = [](const Params& p) {
    return std::abs(p.at("x") - 1) + std::abs(std::log10(p.at("lr")) + 2) + p.at("drop") + (p.at("kind") == 1 ? 0 : 1);
  };
  run(tpe, space, f, 40, 1);  // REQUIREs validity inside
  RandomSampler random;
  run(random, space, f, 40, 1);
}

TEST_CASE("the same seed gives the same proposal, another seed another") {
  SearchSpace space = plane();
  TpeSampler tpe;
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 15; ++i) trials.push_back(finished(space, i, {{"x", i * 0.3 - 2}, {"y", 1.0}}, i * 0.1));
  Params a = tpe.sample({space, trials, {StudyDirection::Minimize}, 5, 15, {}}).params;
  Params b = tpe.sample({space, trials, {StudyDirection::Minimize}, 5, 15, {}}).params;
  Params c = tpe.sample({space, trials, {StudyDirection::Minimize}, 6, 15, {}}).params;
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("TPE beats random search on a 2-D sphere, minimising and maximising") {
  SearchSpace space = plane();
  std::vector<double> tpe_best, random_best, tpe_max, random_max;
  for (std::uint64_t seed = 0; seed < 7; ++seed) {
    TpeSampler tpe;
    RandomSampler random;
    tpe_best.push_back(run(tpe, space, sphere, 60, seed));
    random_best.push_back(run(random, space, sphere, 60, seed));
    auto peak = [](const Params& p) { return -sphere(p); };
    tpe_max.push_back(run(tpe, space, peak, 60, seed, StudyDirection::Maximize));
    random_max.push_back(run(random, space, peak, 60, seed, StudyDirection::Maximize));
  }
  CHECK(median(tpe_best) < 0.5 * median(random_best));
  CHECK(median(tpe_max) > 0.5 * median(random_max));  // values are negative: closer to 0 is better
}

TEST_CASE("the feasible predicate vetoes candidates, if it vetoes everything the sampler says so and stops") {
  SearchSpace space = plane();
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 20; ++i) trials.push_back(finished(space, i, {{"x", i * 0.4 - 4}, {"y", 0.0}}, std::abs(i * 0.4 - 4)));
  TpeSampler tpe;
  FeasiblePredicate positive_x = [](const Params& p) { return p.at("x") > 2.0; };
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    Proposal p = tpe.sample({space, trials, {StudyDirection::Minimize}, seed, 20, positive_x});
    CHECK(p.params.at("x") > 2.0);
    CHECK(p.feasible);
  }
  Proposal none = tpe.sample({space, trials, {StudyDirection::Minimize}, 1, 20, [](const Params&) { return false; }});
  CHECK(none.all_candidates_vetoed);
  CHECK_FALSE(none.feasible);
  CHECK(space.is_valid_assignment(none.params));
}

TEST_CASE("constant liar: a running trial of another worker pushes proposals away from its point") {
  SearchSpace space = plane();
  std::vector<FrozenTrial> trials;
  // A good region around (1, 1); the worker's peers are already evaluating there.
  for (int i = 0; i < 30; ++i) {
    double x = -4.5 + 0.3 * i;
    trials.push_back(finished(space, i, {{"x", x}, {"y", 1.0}}, std::abs(x - 1.0)));
  }
  TpeOptions optuna_liars;
  optuna_liars.liar_weights = LiarWeights::Optuna;
  auto mean_distance = [&](const std::vector<FrozenTrial>& history, const TpeOptions& options) {
    double total = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      TpeSampler tpe(options);
      Params p = tpe.sample({space, history, {StudyDirection::Minimize}, seed, static_cast<int>(history.size()), {}}).params;
      total += std::abs(p.at("x") - 1.0);
    }
    return total / 40;
  };
  std::vector<FrozenTrial> with_running = trials;
  for (int r = 0; r < 6; ++r) {
    FrozenTrial running = finished(space, 30 + r, {{"x", 1.0 + 0.05 * r}, {"y", 1.0}}, 0);
    running.state = TrialState::Running;
    running.values.clear();
    with_running.push_back(running);
  }
  const double alone = mean_distance(trials, {});
  CHECK(mean_distance(with_running, {}) > alone);
  // Six full-weight liars (Optuna) push harder than six weighing 1/7 each (bfhpo).
  CHECK(mean_distance(with_running, optuna_liars) > mean_distance(with_running, {}));
  CHECK(mean_distance(trials, optuna_liars) == alone);
}

TEST_CASE("liar weight: each running trial weighs 1 / (1 + running), all of them together less than one finished trial") {
  CHECK(tpe_liar_weight(1) == 0.5);
  for (int running = 1; running < 64; ++running) {
    CHECK(tpe_liar_weight(running + 1) < tpe_liar_weight(running));
    CHECK(running * tpe_liar_weight(running) < 1.0);
  }
  CHECK(TpeOptions{}.liar_weights == LiarWeights::Batch);
  CHECK(optuna31_tpe_options().liar_weights == LiarWeights::Optuna);
  // The key reaches the sampler: with other workers' trials running, "optuna" proposes otherwise.
  const json space = json::parse(R"({"x": {"type": "float", "low": -5, "high": 5},
                                     "y": {"type": "float", "low": -5, "high": 5}})");
  const SearchSpace plane_space = plane();
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 20; ++i) trials.push_back(finished(plane_space, i, {{"x", i * 0.4 - 4}, {"y", 0.5}}, std::abs(i * 0.4 - 4)));
  for (int r = 0; r < 6; ++r) {
    trials.push_back(finished(plane_space, 20 + r, {{"x", 0.05 * r}, {"y", 0.5}}, 0));
    trials.back().state = TrialState::Running;
    trials.back().values.clear();
  }
  const auto proposals = [&](Sampler& sampler) {
    std::vector<Params> out;
    for (int number = 26; number < 46; ++number)
      out.push_back(sampler.sample({plane_space, trials, {StudyDirection::Minimize}, 2, number, {}}).params);
    return out;
  };
  const auto from_section = [&](const json& sampler_section) {
    const StudySpec spec = parse_study_spec({{"name", "s"}, {"seed", 2}, {"sampler", sampler_section}, {"search_space", space}}, "s.json");
    return proposals(*make_sampler(spec));
  };
  TpeOptions optuna_liars;
  optuna_liars.liar_weights = LiarWeights::Optuna;
  TpeSampler bfhpo_defaults, with_optuna_liars(optuna_liars);
  CHECK(from_section({{"type", "tpe"}, {"liar_weight", "optuna"}}) == proposals(with_optuna_liars));
  CHECK(from_section({{"type", "tpe"}}) == proposals(bfhpo_defaults));
  CHECK(proposals(bfhpo_defaults) != proposals(with_optuna_liars));
}

TEST_CASE("the Parzen estimator's log density equals Optuna 3.1's on the same observations") {
  // Reference: optuna 3.1 samplers._tpe.parzen_estimator._ParzenEstimator(obs, space,
  // _ParzenEstimatorParameters(True, 1.0, True, False, default_weights, multivariate)).log_pdf(points).
  std::vector<Distribution> dims{FloatDistribution{-5, 5, false, std::nullopt}, FloatDistribution{-5, 5, false, std::nullopt}};
  Eigen::ArrayXXd observations(3, 2), points(3, 2);
  observations << 0.5, 1.0, -2.0, 3.0, 4.0, -1.0;
  points << 0.0, 0.0, 1.0, 2.0, -4.0, 4.5;
  Eigen::ArrayXd weights = Eigen::ArrayXd::Ones(3);
  tpe::ParzenOptions multivariate;
  multivariate.bandwidth_from_spread = false;  // Optuna's rule: 0.2 * range
  multivariate.optuna31_kernel_scale = true;
  tpe::ParzenOptions univariate;
  univariate.multivariate = false;
  univariate.optuna31_kernel_scale = true;
  Eigen::ArrayXd mv = tpe::ParzenEstimator(dims, observations, weights, multivariate).log_pdf(points);
  Eigen::ArrayXd uv = tpe::ParzenEstimator(dims, observations, weights, univariate).log_pdf(points);
  const double optuna_mv[] = {-1.12766632, -1.13692974, -1.38513382};
  const double optuna_uv[] = {-1.03724934, -1.08906056, -1.36936562};
  for (int i = 0; i < 3; ++i) {
    CHECK(mv[i] == Approx(optuna_mv[i]).epsilon(1e-7));
    CHECK(uv[i] == Approx(optuna_uv[i]).epsilon(1e-7));
  }
}

TEST_CASE("the spread bandwidth is Optuna's for observations spread like a uniform sample, narrower where they agree") {
  // Range 10; 20 observations per dimension, half at mean - a, half at mean + a, with a chosen so that their
  // standard deviation is range / sqrt(12), a uniform sample's. Optuna's bandwidth 0.2 * 20^(-1/6) * range
  // (1.21) is above the magic clip (range / 22), so the clip decides neither.
  std::vector<Distribution> dims{FloatDistribution{-5, 5, false, std::nullopt}, FloatDistribution{0, 10, false, std::nullopt}};
  const double a = 10 / std::sqrt(12.0) * std::sqrt(19.0 / 20.0);
  Eigen::ArrayXXd uniform_like(20, 2), agreeing(20, 2), points(4, 2);
  for (int i = 0; i < 20; ++i) {
    const double side = i % 2 ? 1.0 : -1.0;
    uniform_like.row(i) << side * a, 4.0 - side * a;
    agreeing.row(i) << 0.05 * side, 4.0 + 0.01 * i;
  }
  points << 0.0, 4.0, 2.5, 1.0, -4.0, 9.0, 3.0, 7.0;
  const Eigen::ArrayXd weights = tpe_default_weights(20);
  tpe::ParzenOptions spread, optuna;
  optuna.bandwidth_from_spread = false;
  const Eigen::ArrayXd s = tpe::ParzenEstimator(dims, uniform_like, weights, spread).log_pdf(points);
  const Eigen::ArrayXd o = tpe::ParzenEstimator(dims, uniform_like, weights, optuna).log_pdf(points);
  for (int i = 0; i < 4; ++i) CHECK(s[i] == Approx(o[i]).epsilon(1e-12));
  // Observations that agree: the kernels narrow, so the density one Optuna bandwidth away from them drops.
  Eigen::ArrayXXd away(1, 2);
  away << 1.2, 5.3;
  CHECK(tpe::ParzenEstimator(dims, agreeing, weights, spread).log_pdf(away)[0] <
        tpe::ParzenEstimator(dims, agreeing, weights, optuna).log_pdf(away)[0] - 0.5);
}

TEST_CASE("TPE's startup trials: a Latin hypercube with one objective, uniform draws with several or on request") {
  SearchSpace space = plane();
  auto x_tenths = [&](const TpeOptions& options, const Directions& directions) {
    TpeSampler tpe(options);
    std::vector<FrozenTrial> trials;
    std::set<int> tenths;
    for (int i = 0; i < 10; ++i) {
      Params p = tpe.sample({space, trials, directions, 4, i, {}}).params;
      tenths.insert(static_cast<int>(std::floor(p.at("x") + 5)));
      FrozenTrial t = finished(space, i, p, sphere(p));
      t.values.resize(directions.size(), sphere(p));
      trials.push_back(t);
    }
    return tenths.size();
  };
  const Directions one{StudyDirection::Minimize};
  const Directions two{StudyDirection::Minimize, StudyDirection::Minimize};
  TpeOptions random, hypercube;
  random.startup = StartupDesign::Random;
  hypercube.startup = StartupDesign::LatinHypercube;
  CHECK(x_tenths(TpeOptions{}, one) == 10);
  CHECK(x_tenths(hypercube, two) == 10);
  // 10 uniform draws fill all 10 tenths with probability 10!/10^10 = 0.04%.
  CHECK(x_tenths(random, one) < 10);
  CHECK(x_tenths(TpeOptions{}, two) < 10);
}

TEST_CASE("startup trials sample the prior unvetoed, TPE's candidates are vetoed") {
  SearchSpace space = plane();
  TpeSampler tpe;
  FeasiblePredicate positive_x = [](const Params& p) { return p.at("x") > 0.0; };
  std::vector<FrozenTrial> trials;
  int startup_negative = 0;
  for (int i = 0; i < 10; ++i) {
    Proposal p = tpe.sample({space, trials, {StudyDirection::Minimize}, 3, i, positive_x});
    startup_negative += p.params.at("x") <= 0.0;
    trials.push_back(finished(space, i, p.params, sphere(p.params)));
  }
  CHECK(startup_negative > 0);  // P(no negative x in 10 uniform draws) = 2^-10
  for (std::uint64_t seed = 0; seed < 10; ++seed)
    CHECK(tpe.sample({space, trials, {StudyDirection::Minimize}, seed, 10, positive_x}).params.at("x") > 0.0);
}

TEST_CASE("with several objectives TPE's candidates are vetoed too (the memory gate's predicate)") {
  SearchSpace space = plane();
  TpeSampler tpe;
  FeasiblePredicate positive_x = [](const Params& p) { return p.at("x") > 0.0; };
  const Directions two{StudyDirection::Minimize, StudyDirection::Minimize};
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 12; ++i) {  // the startup trials and two of TPE's; ZDT-like trade-off in x
    Proposal p = tpe.sample({space, trials, two, 3, i, positive_x});
    FrozenTrial t = finished(space, i, p.params, sphere(p.params));
    t.values = {p.params.at("x"), -p.params.at("x") + 0.1 * p.params.at("y") * p.params.at("y")};
    trials.push_back(t);
  }
  int negative_startup = 0;
  for (int i = 0; i < 10; ++i) negative_startup += trials[static_cast<std::size_t>(i)].params.at("x") <= 0.0;
  CHECK(negative_startup > 0);  // the startup draws are not vetoed: P(none negative) = 2^-10
  // The front lies at every x: without the veto, 4 of these 20 proposals have x <= 0.
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    CHECK(tpe.sample({space, trials, two, seed, 12, positive_x}).params.at("x") > 0.0);
}

TEST_CASE("the normal mass of an interval far out on both sides is exactly 1, as the erfc formula gives it") {
  // Just inside the shortcut's threshold the erfc path already rounds to exactly 1 ...
  CHECK(tpe::log_gauss_mass(-8.4999, 8.4999) == 0.0);
  CHECK(tpe::log_gauss_mass(-8.4999, 30.0) == 0.0);
  // ... so the shortcut beyond it changes nothing, and a narrower interval is still below 1.
  for (double far : {8.5000001, 9.0, 40.0, 1e308}) CHECK(tpe::log_gauss_mass(-far, far) == 0.0);
  CHECK(tpe::log_gauss_mass(-8.0, 8.0) < 0.0);
  CHECK(tpe::log_gauss_mass(-9.0, 7.0) < 0.0);
}

TEST_CASE("the normal mass of an interval around 0 is as accurate as the erfc formula") {
  // gauss_mass takes the two tails of a straddling interval from a table of
  // Taylor expansions (truncation error < 1e-18). Each tail (<= 1/2) is
  // within about an ulp of itself, <= 5.5e-17, and each of the two
  // subtractions from 1 rounds by half an ulp, <= 5.5e-17: 2.2e-16 in all.
  // The erfc formula 1 - erfc(-a/sqrt2)/2 - erfc(b/sqrt2)/2 is off by up to
  // 1.9e-16 on these points; a table a term short would be off by 1e-15.
  // erfcl's long double gives the exact value to ~1e-19. The points fall on
  // the table's nodes, between them and beyond its end (8.5).
  const auto exact = [](double a, double b) {
    const long double h = std::sqrt(0.5L);
    return 1.0L - 0.5L * std::erfc(-static_cast<long double>(a) * h) - 0.5L * std::erfc(static_cast<long double>(b) * h);
  };
  long double worst = 0;
  for (double a = 0; a <= 9.2; a += 1.0 / 128)
    for (double b : {a, 1.0 / 97 + a, 0.3, 2.0 + 1.0 / 256, 8.49, 8.6})
      for (const auto& [lo, hi] : {std::pair(-a, b), std::pair(-b, a)})
        worst = std::max(worst, std::abs(static_cast<long double>(tpe::gauss_mass(lo, hi)) - exact(lo, hi)));
  CHECK(static_cast<double>(worst) <= 2.5e-16);
  // One-sided intervals still come from erfc, to full relative precision.
  CHECK(tpe::gauss_mass(1.0, 2.0) == Approx(static_cast<double>(exact(-2.0, 8.6) - exact(-1.0, 8.6))).epsilon(1e-14));
}

TEST_CASE("the log density of many points over kernels of one width each is the mixture's, term for term") {
  // The multivariate rules give every observation's kernel the same width per
  // dimension, where log_pdf scores points in blocks of eight: 19 points
  // cover two full blocks and a partial one. Reference: the mixture of
  // truncated normals summed directly in long double.
  std::vector<Distribution> dims{FloatDistribution{-5.0, 5.0, false, std::nullopt},
                                 FloatDistribution{1e-4, 1e-1, true, std::nullopt},
                                 FloatDistribution{0.0, 1.0, false, std::nullopt}};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int n = 30;
  Eigen::ArrayXXd observations(n, 3), points(19, 3);
  for (Eigen::ArrayXXd* m : {&observations, &points})
    for (Eigen::Index i = 0; i < m->rows(); ++i) {
      (*m)(i, 0) = -5.0 + 10.0 * u(rng);
      (*m)(i, 1) = std::exp(std::log(1e-4) + std::log(1e3) * u(rng));
      (*m)(i, 2) = u(rng) * u(rng);  // crowded near 0: narrow kernels
    }
  Eigen::ArrayXd weights(n);
  for (int i = 0; i < n; ++i) weights[i] = 0.5 + u(rng);
  tpe::ParzenOptions options;
  options.clip_count = 200;  // lets the third dimension's kernels narrow to its spread
  const tpe::ParzenEstimator estimator(dims, observations, weights, options);
  const Eigen::ArrayXd got = estimator.log_pdf(points);

  // The widths the estimator's rule gives (see parzen_estimator.hpp).
  const double sigma0 = 0.2 * std::pow(static_cast<double>(n), -1.0 / 7.0);
  std::vector<double> low{-5.0, std::log(1e-4), 0.0}, high{5.0, std::log(1e-1), 1.0}, sigma(3);
  Eigen::ArrayXXd mus(n, 3);
  for (int d = 0; d < 3; ++d) {
    for (int i = 0; i < n; ++i) mus(i, d) = d == 1 ? std::log(observations(i, d)) : observations(i, d);
    const Eigen::ArrayXd column = mus.col(d);
    const double spread = std::sqrt((column - column.mean()).square().sum() / (n - 1));
    const double range = high[d] - low[d];
    sigma[d] = std::min(std::max(sigma0 * std::sqrt(12.0) * spread, range / 100.0), range);
  }
  const double total_weight = weights.sum() + 1.0;
  for (Eigen::Index p = 0; p < points.rows(); ++p) {
    long double density = 0;
    for (int k = 0; k <= n; ++k) {  // the prior kernel last: centred, the range wide, weight 1
      long double log_kernel = std::log(static_cast<long double>(k < n ? weights[k] : 1.0) / total_weight);
      for (int d = 0; d < 3; ++d) {
        const long double mu = k < n ? mus(k, d) : 0.5 * (low[d] + high[d]);
        const long double s = k < n ? sigma[d] : high[d] - low[d];
        const long double x = d == 1 ? std::log(points(p, d)) : points(p, d), z = (x - mu) / s;
        const long double h = std::sqrt(0.5L);
        const long double mass = 0.5L * (std::erfc((low[d] - mu) / s * h) - std::erfc((high[d] - mu) / s * h));
        log_kernel += -0.5L * std::log(2 * static_cast<long double>(M_PI)) - std::log(s) - 0.5L * z * z - std::log(mass);
      }
      density += std::exp(log_kernel);
    }
    // Double rounding over ~10 terms of magnitude <= 10 per kernel: 1e-13 absolute is ample.
    CHECK(got[p] == Approx(static_cast<double>(std::log(density))).margin(1e-13));
  }
}

namespace {

// branch a|b with x only under b, y everywhere; the value depends on y alone,
// and the below trials hold as many a's as b's with equal values, so TPE has
// no reason to prefer either branch.
SearchSpace branch_space() {
  return SearchSpace::from_json(json::parse(R"({
    "branch": {"type": "categorical", "choices": ["a", "b"]},
    "x":      {"type": "float", "low": 0, "high": 1, "when": {"branch": "b"}},
    "y":      {"type": "float", "low": 0, "high": 1}})"), "test");
}

std::vector<FrozenTrial> branch_history(const SearchSpace& space) {
  std::vector<FrozenTrial> trials;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int i = 0; i < 24; ++i) {  // under 25 "above" trials, so the weights ramp treats a and b alike
    const double y = 0.5 + (i % 4 < 2 ? 1 : -1) * 0.02 * (i / 2 + 1);  // pairs (a, b) of equal value
    Params p{{"branch", i % 2}, {"y", y}};
    if (i % 2) p["x"] = uniform(rng);
    trials.push_back(finished(space, i, p, std::abs(y - 0.5)));
  }
  return trials;
}

}  // namespace

TEST_CASE("a conditional parameter's draws do not favour the choice that activates it") {
  // Summed into a candidate's score, the x group's log-ratio (positive on
  // average for draws from l(x)) would pick branch b most of the time.
  SearchSpace space = branch_space();
  const std::vector<FrozenTrial> trials = branch_history(space);
  TpeSampler tpe;
  int b = 0;
  const int asks = 200;
  for (int i = 0; i < asks; ++i) b += tpe.sample({space, trials, {StudyDirection::Minimize}, 1, 24 + i, {}}).params.at("branch") == 1;
  // Binomial(200, 1/2): 0.35..0.65 is more than 4 standard deviations (0.035) either side.
  CHECK(b > 0.35 * asks);
  CHECK(b < 0.65 * asks);
}

TEST_CASE("the veto on a conditional parameter holds, and a vetoed best draw gives way to the candidate's own") {
  SearchSpace space = branch_space();
  const std::vector<FrozenTrial> trials = branch_history(space);
  TpeSampler tpe;
  FeasiblePredicate small_x = [](const Params& p) { return !p.count("x") || p.at("x") < 0.5; };
  FeasiblePredicate only_b_small_x = [](const Params& p) { return p.count("x") && p.at("x") < 0.5; };
  int from_tpe = 0;
  for (int i = 0; i < 40; ++i) {
    Proposal p = tpe.sample({space, trials, {StudyDirection::Minimize}, 2, 24 + i, small_x});
    CHECK(small_x(p.params));
    Proposal forced = tpe.sample({space, trials, {StudyDirection::Minimize}, 2, 24 + i, only_b_small_x});
    CHECK(only_b_small_x(forced.params));
    from_tpe += !forced.all_candidates_vetoed;
  }
  // Of each ask's 24 candidates about half are b, and about half of those drew
  // an x under 0.5: a TPE candidate, not the random fallback, nearly always,
  // also when the x group's best draw is vetoed.
  CHECK(from_tpe > 30);
}

TEST_CASE("a stepped dimension's kernels are at least min_bandwidth_steps steps wide") {
  // A dropout on [0, 0.5] in steps of 0.05, every observation at 0.5; the clip alone would leave range / 100.
  const std::vector<Distribution> dims{FloatDistribution{0.0, 0.5, false, 0.05}};
  const Eigen::ArrayXXd observations = Eigen::ArrayXXd::Constant(20, 1, 0.5);
  tpe::ParzenOptions clip_only;
  clip_only.clip_count = 1000.0;
  clip_only.prior_weight = 1e-15;
  tpe::ParzenOptions half_step = clip_only;
  half_step.min_bandwidth_steps = 0.5;
  Eigen::ArrayXXd points(2, 1);
  points << 0.5, 0.45;
  const auto log_ratio = [&](const tpe::ParzenOptions& options) {
    const Eigen::ArrayXd log_p =
        tpe::ParzenEstimator(dims, observations, Eigen::ArrayXd::Ones(20), options).log_pdf(points);
    return log_p[1] - log_p[0];
  };
  // sigma = 0.025: the cell of 0.5 is [-1, 1] sigmas around the kernel, the cell of 0.45 [-3, -1].
  const auto normal_cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double expected = std::log((normal_cdf(-1) - normal_cdf(-3)) / (normal_cdf(1) - normal_cdf(-1)));
  CHECK(log_ratio(half_step) == Approx(expected).epsilon(1e-9));
  CHECK(log_ratio(clip_only) < -10.0);  // sigma = 0.0055: 0.45 is 4.5 sigmas away and more
}

TEST_CASE("discrete_widths changes the proposals of a space with a categorical parameter, not of a continuous one") {
  const SearchSpace mixed = SearchSpace::from_json(json::parse(R"({
      "optimizer": {"type": "categorical", "choices": ["adam", "sgd"]},
      "x": {"type": "float", "low": -5, "high": 5},
      "dropout": {"type": "float", "low": 0, "high": 0.5, "step": 0.05}})"), "t.json");
  const auto proposals = [](const SearchSpace& space, bool discrete_widths) {
    TpeOptions options;
    options.discrete_widths = discrete_widths;
    TpeSampler sampler(options);
    std::vector<FrozenTrial> trials;
    std::vector<Params> out;
    for (int i = 0; i < 30; ++i) {
      out.push_back(sampler.sample({space, trials, {StudyDirection::Minimize}, 3, i, {}}).params);
      double value = 0;
      for (const auto& [name, v] : out.back()) value += (v - 0.4) * (v - 0.4);
      trials.push_back(finished(space, i, out.back(), value));
    }
    return out;
  };
  CHECK(proposals(mixed, true) != proposals(mixed, false));
  CHECK(proposals(plane(), true) == proposals(plane(), false));
  CHECK(TpeOptions{}.discrete_widths);
  CHECK_FALSE(optuna31_tpe_options().discrete_widths);
}

TEST_CASE("mixed_space_prior: the prior weighs 2 in a space with a categorical, 1 at 25 trials, ramping to 2 at 50") {
  TpeOptions o;
  CHECK(tpe_mixed_space_prior_scale(o) == 2.0);  // budget not known
  o.n_trials = 25;
  CHECK(tpe_mixed_space_prior_scale(o) == 1.0);
  o.n_trials = 40;
  CHECK(tpe_mixed_space_prior_scale(o) == Approx(1.6));
  o.n_trials = 50;
  CHECK(tpe_mixed_space_prior_scale(o) == 2.0);
  o.n_trials = 100;
  CHECK(tpe_mixed_space_prior_scale(o) == 2.0);
  o.n_trials = 25;
  o.budget_aware = false;
  CHECK(tpe_mixed_space_prior_scale(o) == 2.0);
  o.mixed_space_prior = false;
  CHECK(tpe_mixed_space_prior_scale(o) == 1.0);
  CHECK(TpeOptions{}.mixed_space_prior);
  CHECK_FALSE(optuna31_tpe_options().mixed_space_prior);
}

TEST_CASE("mixed_space_prior changes a mixed space's proposals while no other trial runs, not a continuous space's") {
  const SearchSpace space = SearchSpace::from_json(json::parse(R"({
      "opt": {"type": "categorical", "choices": ["a", "b"]},
      "x": {"type": "float", "low": -5, "high": 5}})"), "t.json");
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uniform(-5.0, 5.0);
  std::vector<FrozenTrial> trials;
  for (int i = 0; i < 40; ++i) {
    const double x = uniform(rng);
    const int opt = i % 4 == 0 ? 0 : 1;
    trials.push_back(finished(space, i, {{"opt", opt}, {"x", x}}, (opt == 0 ? 10.0 : 0.0) + std::abs(x - 1)));
  }
  const auto asked = [&](bool on, const std::vector<FrozenTrial>& history) {
    TpeOptions options;
    options.mixed_space_prior = on;
    TpeSampler sampler(options);
    std::vector<Params> out;
    for (int i = 0; i < 50; ++i) out.push_back(sampler.sample({space, history, {StudyDirection::Minimize}, 11, 41 + i, {}}).params);
    return out;
  };
  CHECK(asked(true, trials) != asked(false, trials));
  // Another worker's running trial: the prior keeps its usual weight.
  std::vector<FrozenTrial> running = trials;
  FrozenTrial r = finished(space, 40, {{"opt", 1}, {"x", 1.0}}, 0.0);
  r.state = TrialState::Running;
  r.values.clear();
  running.push_back(r);
  CHECK(asked(true, running) == asked(false, running));
  // A space without a categorical parameter: the same proposals.
  const auto proposals = [](bool on) {
    TpeOptions options;
    options.mixed_space_prior = on;
    TpeSampler sampler(options);
    return plane_sphere_proposals(sampler, 30, 3);
  };
  CHECK(proposals(true) == proposals(false));
}
