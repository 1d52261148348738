// The estimators that ship with bfhpo, for `infer --model NAME` (no study,
// no training): each a folder of `bfhpo train`'s output (config.json,
// weights.pt, result.json) under estimators/ in the source tree, or under
// $BFHPO_ESTIMATORS when set, beside the study and the exact command that
// trained it (README.md). An estimator answers data whose shape its
// simulator trained on: items and persons within its ranges, missing cells
// only when it trained with them (at most its largest share), and, for the
// graded model, as many categories.
#pragma once

#include "inference/response_matrix.hpp"
#include "models/simulators/simulator_spec.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct ShippedEstimator {
  std::string name;                  // its folder's name, e.g. "2pl"
  std::filesystem::path folder;
  models::SimulatorSpec simulator;  // what it trained on: its model, ranges and priors
};

struct DataShape {
  int64_t items = 0, persons = 0;
  double missing_share = 0.0;
  int64_t categories = 2;  // the highest response seen + 1

  static DataShape of(const ResponseMatrix& data);
};

std::filesystem::path estimators_folder();

// Every folder of estimators_folder() with a config.json, by name.
std::vector<ShippedEstimator> shipped_estimators();

// The estimator of `model` (rasch, 2pl, 3pl, grm) whose ranges hold `shape`, the first by name when several
// do. A UserError otherwise: an unknown model names the shipped ones; a shape outside every one names each
// one's ranges and points to `bfhpo init`.
const ShippedEstimator& choose_estimator(const std::vector<ShippedEstimator>& estimators, const std::string& model,
                                         const DataShape& shape);

// The estimator of `model` to fine-tune for data of `shape` (init --fine-tune):
// for the graded model, of its categories; one whose ranges hold the shape
// when there is one, else the one nearest in items and persons (the sum of
// the log ratios of the shape to each range's nearest end). A UserError when
// none of the model (and categories) ships.
const ShippedEstimator& nearest_estimator(const std::vector<ShippedEstimator>& estimators, const std::string& model,
                                          const DataShape& shape);

// "16-24 items, 400-600 persons, no missing cells" (or "at most 20% missing cells"; ", 5 categories").
std::string ranges_text(const models::SimulatorSpec& simulator);

}  // namespace bfhpo::inference
