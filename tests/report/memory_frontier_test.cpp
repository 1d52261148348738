#include "common/user_error.hpp"
#include "report/memory_frontier.hpp"
#include "report/status_table.hpp"
#include "tests/report/recorded_trials.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace bfhpo;
using hpo::StudyDirection;
using hpo::TrialState;

namespace {

// Trials with values and peaks on coarse grids, so that ties in both occur.
std::vector<report::FrontierTrial> random_candidates(std::mt19937& rng, int n) {
  std::uniform_int_distribution<int> value(0, 12), peak(1, 40);
  std::vector<report::FrontierTrial> out;
  for (int i = 0; i < n; ++i) out.push_back({i, 0.25 * value(rng), 512.0 * peak(rng), i % 3 != 0, std::nullopt});
  return out;
}

bool strictly_better(double a, double b, StudyDirection direction) {
  return direction == StudyDirection::Minimize ? a < b : a > b;
}

// a dominates b: no worse in value and peak, better in one.
bool dominates(const report::FrontierTrial& a, const report::FrontierTrial& b, StudyDirection direction) {
  const bool no_worse = !strictly_better(b.value, a.value, direction) && a.peak_mb <= b.peak_mb;
  return no_worse && (strictly_better(a.value, b.value, direction) || a.peak_mb < b.peak_mb);
}

}  // namespace

TEST_CASE("memory frontier: each level's best is the best that fits, and lies on the front of value against peak",
          "[memory_frontier]") {
  std::mt19937 rng(5);
  for (const auto direction : {StudyDirection::Minimize, StudyDirection::Maximize}) {
    for (int round = 0; round < 50; ++round) {
      const auto candidates = random_candidates(rng, 1 + round % 25);
      const auto front = report::memory_pareto_front(candidates, direction);
      // The front: sorted by peak, each strictly better than the one before, none dominated,
      // and every other trial dominated by or equal to a member.
      for (size_t i = 1; i < front.size(); ++i) {
        CHECK(front[i].peak_mb > front[i - 1].peak_mb);
        CHECK(strictly_better(front[i].value, front[i - 1].value, direction));
      }
      for (const auto& member : front)
        for (const auto& c : candidates) CHECK_FALSE(dominates(c, member, direction));
      for (const auto& c : candidates) {
        const bool covered = std::any_of(front.begin(), front.end(), [&](const report::FrontierTrial& m) {
          return dominates(m, c, direction) || (m.value == c.value && m.peak_mb == c.peak_mb);
        });
        CHECK(covered);
      }
      // Each level: the best by value, then peak, then trial number, among those that fit.
      for (double level : {400.0, 1024.0, 4096.0, 8192.0, 16384.0, 30000.0}) {
        std::optional<report::FrontierTrial> expected;
        for (const auto& c : candidates) {
          if (c.peak_mb > level) continue;
          if (!expected || strictly_better(c.value, expected->value, direction) ||
              (c.value == expected->value && c.peak_mb < expected->peak_mb))
            expected = c;
        }
        const auto best = report::best_within(candidates, direction, level);
        REQUIRE(best.has_value() == expected.has_value());
        if (!best) continue;
        CHECK(best->number == expected->number);
        const bool on_front = std::any_of(front.begin(), front.end(),
                                          [&](const report::FrontierTrial& m) { return m.number == best->number; });
        CHECK(on_front);
      }
    }
  }
}

TEST_CASE("memory frontier: a trial's peak is its measured one when it trained, else its estimate; "
          "only COMPLETE trials with a value take part", "[memory_frontier]") {
  std::vector<hpo::FrozenTrial> trials{
      test::launched_trial(0, TrialState::Complete, 1.5, "fits", std::nullopt, 16, 900.0, 850.0, 4.0),
      test::launched_trial(1, TrialState::Complete, 1.2, "fits", std::nullopt, 16, 9000.0, 9500.0, 5.0),
      test::memory_pruned_trial(2, 80000.0),
      test::launched_trial(3, TrialState::Pruned, std::nullopt, "fits", std::nullopt, 16, 100.0, 90.0, 2.0),
      test::launched_trial(4, TrialState::Complete, 1.0, "fits", std::nullopt, 16, 30000.0, 0.0, 5.0)};
  // Trial 4 was told from elsewhere: no training recorded, so its estimate stands.
  trials[4].system_attrs.erase("bfhpo:batch_size");
  trials[4].system_attrs.erase("bfhpo:measured_peak_mb");
  const auto candidates = report::frontier_candidates(report::trial_facts(trials));
  REQUIRE(candidates.size() == 3);
  CHECK(candidates[0].peak_mb == 850.0);
  CHECK(candidates[0].measured);
  CHECK(candidates[2].number == 4);
  CHECK(candidates[2].peak_mb == 30000.0);
  CHECK_FALSE(candidates[2].measured);

  const auto levels =
      report::memory_frontier(candidates, StudyDirection::Minimize, report::default_memory_levels_mb());
  REQUIRE(levels.size() == 5);
  CHECK(levels[0].level_mb == 8192.0);
  CHECK(levels[0].best->number == 0);   // trial 1 measured 9500 MB: over 8 GB
  CHECK(levels[1].best->number == 1);   // 16 GB
  CHECK(levels[2].best->number == 1);   // 24 GB: trial 4's 30000 MB does not fit
  CHECK(levels[3].best->number == 4);   // 40 GB
  const auto json = report::memory_frontier_json(levels);
  CHECK(json[3]["peak"] == "estimated");
  CHECK(json[0]["peak"] == "measured");
  CHECK(json[0]["estimated_peak_mb"] == 900.0);

  const std::string table = report::status_table(test::tiny_study_spec(std::filesystem::temp_directory_path()), trials,
                                                 report::parse_memory_levels_gb("0.5,16", "test"));
  INFO(table);
  CHECK_THAT(table, Catch::Contains("under 0.5 GB: none fits"));
  CHECK_THAT(table, Catch::Contains("under 16 GB: trial 1, value 1.2, peak 9500.0 MB measured (estimated 9000.0 MB)"));
  // Sizes with the same answer share a line.
  const std::string text = report::memory_frontier_text(levels, "val_nll");
  CHECK_THAT(text, Catch::Contains("  under 8 GB: trial 0, val_nll 1.5, peak 850.0 MB measured"));
  CHECK_THAT(text, Catch::Contains("  under 16 or 24 GB: trial 1,"));
  CHECK_THAT(text, Catch::Contains("  under 40 or 80 GB: trial 4, val_nll 1, peak 30000.0 MB estimated\n"));
  CHECK(report::memory_frontier_text(
            report::memory_frontier(candidates, StudyDirection::Minimize, report::parse_memory_levels_gb("0.1,0.2,0.3", "t")),
            "v") == "memory frontier (the best trial whose peak fits each size; measured, else estimated):\n"
                    "  under 0.1, 0.2 or 0.3 GB: none fits\n");
}

TEST_CASE("memory levels: GB separated by commas, sorted; anything else is refused with the fix",
          "[memory_frontier]") {
  CHECK(report::parse_memory_levels_gb("24,8,8,80", "--memory-levels") ==
        std::vector<double>{8192.0, 24576.0, 81920.0});
  CHECK(report::parse_memory_levels_gb("0.5", "--memory-levels") == std::vector<double>{512.0});
  for (const char* bad : {"", "8,,16", "eight", "8GB", "-4", "0", "inf"}) {
    INFO(bad);
    CHECK_THROWS_WITH(report::parse_memory_levels_gb(bad, "--memory-levels"),
                      Catch::Contains("--memory-levels") && Catch::Contains("Fix:"));
  }
}
