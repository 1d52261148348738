// `bfhpo report`: one self-contained HTML page of a study -- inline SVG and
// CSS, no script, nothing fetched when it is viewed:
//   - the study at a glance and the best trial's params;
//   - optimization history (COMPLETE trials' values, best so far);
//   - intermediate values per trial, pruned trials ending in a cross;
//   - parameter importance (param_importance.hpp, the method stated);
//   - memory: estimated and measured peak per trial against the budget, and a
//     table of the gate's decisions and every OOM ladder;
//   - the memory frontier: the best trial within each memory level (a table)
//     and the front of value against peak (report/memory_frontier.hpp);
//   - time per trial;
//   - the best trial's posterior diagnostics: ECDF difference of the SBC
//     ranks with a 95% simultaneous band, recovery (posterior mean vs truth)
//     and z-score vs contraction, per parameter, from the file of per-item
//     summaries recorded beside its weights (bfhpo:posterior_items).
// Every mark a trial contributes carries data-trial="N" (history points) or
// a class named after the plot, so tests can count them.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"
#include "report/memory_frontier.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bfhpo::report {

// `study_system_attrs`: the study's system attributes (the metric name, Optuna's "study:metric_names").
std::string html_report(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                        const nlohmann::json& study_system_attrs,
                        const std::vector<double>& memory_levels_mb = default_memory_levels_mb());

}  // namespace bfhpo::report
