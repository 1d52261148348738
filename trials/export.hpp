// Exports of a training study's best trial for other tools.
//   best_configuration_json: what `bfhpo export --best --format json` prints
//     for a training study -- the hpo layer's best trial (params, value,
//     attributes) plus "config", the complete configuration with the study's
//     fixed values and the memory configuration the trial trained with, which
//     `bfhpo train STUDY.json --params FILE` accepts (its seed included),
//     "trained_with" (seed, threads, device, LibTorch, OOM retries and the
//     validation loss; trials/reproduction.hpp), and "weights", the path of
//     its saved weights. `export --best --budget-mb N`: the best that fits N.
//   bayesflow_json: the closest BayesFlow 2.1 configuration, as keyword
//     arguments that exist in BayesFlow 2.1 with the same meaning (adapter,
//     DeepSet, CouplingFlow, ContinuousApproximator, BasicWorkflow.fit_online,
//     the Keras optimizer), and "notes": what does not carry over (the
//     per-item flow, the cell features, attention across items and the global
//     summary, the clamp value, calibration) and the closest equivalent.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace bfhpo::trials {

// With `budget_mb`, the best among the trials whose peak fits it (measured,
// else estimated: report/memory_frontier.hpp); a UserError naming the
// smallest peak there is when none fits.
nlohmann::json best_configuration_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                                       std::optional<double> budget_mb = std::nullopt);
nlohmann::json bayesflow_json(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials,
                              std::optional<double> budget_mb = std::nullopt);

}  // namespace bfhpo::trials
