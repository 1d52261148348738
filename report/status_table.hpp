// `bfhpo status` as a table: one row a trial with its state, value, duration,
// the batch size and item chunk it trained with (after the gate and the OOM
// ladder, not the proposed ones), measured and estimated peak, why it was
// pruned or failed (on a line of its own below the row), and its params;
// below a RUNNING trial, its worker (its Slurm job, array task and node when
// it runs in one, else its host and pid); then the best trial. Columns a trial has
// no fact for show "-".
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"
#include "report/memory_frontier.hpp"

#include <string>
#include <vector>

namespace bfhpo::report {

// One row a trial (a value column an objective; the columns no trial has a
// value in are left out: an external study has no time, batch, chunk or
// peak), the best trial or the Pareto front, and below it the memory
// frontier at `memory_levels_mb` (when a trial has a peak).
std::string status_table(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                         const std::vector<double>& memory_levels_mb = default_memory_levels_mb());

}  // namespace bfhpo::report
