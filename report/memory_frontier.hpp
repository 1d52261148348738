// The memory frontier of a study: the best posterior that fits each memory
// level, so that a lab with a 24 GB card and a cluster with 80 GB cards each
// find their network in one study (issue 27 part 4).
//
// A trial's peak is what it measured when it trained (bfhpo:measured_peak_mb:
// the device's peak with the configuration the gate and the OOM ladder left
// it), else what the estimate said before launch (bfhpo:estimated_peak_mb, at
// the study's largest shape). Only COMPLETE trials with a value and a peak
// that meet the study's constraints take part; a trial of an
// external-objective study has no peak and no place. In a study of several
// objectives the value is the ranked objective's (trial_facts.hpp).
//
//   levels          8, 16, 24, 40 and 80 GB (a GB is 1024 MB here),
//                   or the budgets a user names;
//   best within L   the best value among trials whose peak is at most L
//                   (ties: the smaller peak, then the earlier trial);
//   front           the trials no other trial beats in both value and peak,
//                   by peak: every level's best is on it.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "report/trial_facts.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bfhpo::report {

inline constexpr double kMbPerGb = 1024.0;

struct FrontierTrial {
  int number = 0;
  double value = 0.0;
  double peak_mb = 0.0;  // measured, else estimated
  bool measured = false;
  std::optional<double> estimated_peak_mb;
};

struct FrontierLevel {
  double level_mb = 0.0;
  std::optional<FrontierTrial> best;  // none when no trial fits
};

// 8, 16, 24, 40 and 80 GB in MB.
std::vector<double> default_memory_levels_mb();

// "8,16,24" (GB, as --memory-levels takes them) in MB, ascending; a UserError
// naming `option` for anything that is not a list of positive numbers.
std::vector<double> parse_memory_levels_gb(const std::string& text, const std::string& option);

// The COMPLETE trials with a value and a peak.
std::vector<FrontierTrial> frontier_candidates(const std::vector<TrialFacts>& facts);

std::optional<FrontierTrial> best_within(const std::vector<FrontierTrial>& candidates, hpo::StudyDirection direction,
                                         double budget_mb);

std::vector<FrontierTrial> memory_pareto_front(const std::vector<FrontierTrial>& candidates,
                                               hpo::StudyDirection direction);

std::vector<FrontierLevel> memory_frontier(const std::vector<FrontierTrial>& candidates,
                                           hpo::StudyDirection direction, const std::vector<double>& levels_mb);

// [{"level_mb", "trial", "value", "peak_mb", "peak": "measured"|"estimated",
//   "estimated_peak_mb"}], trial and the rest null where nothing fits.
nlohmann::json memory_frontier_json(const std::vector<FrontierLevel>& levels);

// A heading and a line a level: "under 24 GB: trial 7, val_nll -1.234, peak
// 3120.0 MB measured (estimated 3300.0 MB)", "none fits" where nothing does;
// sizes that share their answer share a line ("under 40 or 80 GB: ...").
std::string memory_frontier_text(const std::vector<FrontierLevel>& levels, const std::string& metric);

}  // namespace bfhpo::report
