// What the memory machinery did over a set of trials, in numbers a summary
// or a report states: how many the gate pruned before launch and how many it
// re-chunked, the OOM ladders, and how the measured peaks compare with the
// estimates (measured / estimated; the estimate is at the worst-case shape,
// so a ratio a little below 1 is the expected result).
#pragma once

#include "report/trial_facts.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::report {

struct MemoryDigest {
  int pruned_before_launch = 0;         // gate decision "pruned"
  int launched = 0;                     // trials that started training
  int rechunked = 0;                    // launched with a cheaper memory config the gate chose
  std::map<std::string, int> rechunked_to;  // "chunk 8, checkpointing" -> trials
  int survived_oom = 0;                 // launched, hit an OOM, and trained on
  int failed_oom = 0;                   // ran out of memory at the smallest configuration
  // measured / estimated peak of the launched trials that recorded both.
  std::vector<double> peak_ratios;
  std::optional<int> closest_to_budget;  // the trial whose measured peak came nearest the budget
};

MemoryDigest memory_digest(const std::vector<TrialFacts>& trials);

// The median of `values` (the mean of the two middle ones when even); none when empty.
std::optional<double> median_of(std::vector<double> values);

}  // namespace bfhpo::report
