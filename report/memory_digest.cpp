#include "report/memory_digest.hpp"

#include <algorithm>

namespace bfhpo::report {

std::optional<double> median_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

MemoryDigest memory_digest(const std::vector<TrialFacts>& trials) {
  MemoryDigest digest;
  double highest_share = -1.0;
  for (const auto& t : trials) {
    if (t.gate == "pruned") ++digest.pruned_before_launch;
    if (!t.launched()) continue;
    ++digest.launched;
    if (t.gate == "rechunked") {
      ++digest.rechunked;
      ++digest.rechunked_to[t.gate_memory];
    }
    if (!t.oom_history.empty()) ++(t.batch_size ? digest.survived_oom : digest.failed_oom);
    if (t.batch_size && t.measured_peak_mb && t.estimated_peak_mb && *t.estimated_peak_mb > 0)
      digest.peak_ratios.push_back(*t.measured_peak_mb / *t.estimated_peak_mb);
    if (t.measured_peak_mb && t.budget_mb && *t.budget_mb > 0 && *t.measured_peak_mb / *t.budget_mb > highest_share) {
      highest_share = *t.measured_peak_mb / *t.budget_mb;
      digest.closest_to_budget = t.number;
    }
  }
  return digest;
}

}  // namespace bfhpo::report
