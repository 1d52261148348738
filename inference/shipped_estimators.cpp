#include "inference/shipped_estimators.hpp"

#include "common/config_reader.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#ifndef BFHPO_ESTIMATORS_DIR
#error "BFHPO_ESTIMATORS_DIR: inference/CMakeLists.txt sets it to the source tree's estimators/"
#endif

namespace bfhpo::inference {
namespace {

bool holds(const models::SimulatorSpec& simulator, const DataShape& shape) {
  const auto& r = simulator.ranges;
  const bool categories = simulator.model == "grm" ? simulator.n_categories == shape.categories : shape.categories <= 2;
  return categories && shape.items >= r.min_items && shape.items <= r.max_items && shape.persons >= r.min_persons &&
         shape.persons <= r.max_persons && shape.missing_share <= simulator.missing.high;
}

}  // namespace

DataShape DataShape::of(const ResponseMatrix& data) {
  const auto highest = (data.responses * data.mask).max().item<double>();  // missing cells hold 0
  return {data.responses.size(1), data.responses.size(0), data.missing_share(), static_cast<int64_t>(highest) + 1};
}

std::filesystem::path estimators_folder() {
  if (const char* folder = std::getenv("BFHPO_ESTIMATORS"); folder && *folder) return folder;
  return BFHPO_ESTIMATORS_DIR;
}

std::vector<ShippedEstimator> shipped_estimators() {
  std::vector<ShippedEstimator> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(estimators_folder(), error)) {
    const auto config = entry.path() / "config.json";
    if (!std::filesystem::is_regular_file(config)) continue;
    const auto json = read_config_file(config, "shipped estimator's config");
    ConfigSection root(json, config.string(), "");
    auto simulator = root.section("simulator");
    if (!simulator) throw UserError::at(config.string(), "simulator", "missing", "retrain it with `bfhpo train`");
    out.push_back({entry.path().filename().string(), entry.path(), models::simulator_spec_from_config(*simulator)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

const ShippedEstimator& choose_estimator(const std::vector<ShippedEstimator>& estimators, const std::string& model,
                                         const DataShape& shape) {
  std::vector<const ShippedEstimator*> of_model;
  std::set<std::string> models;
  for (const auto& estimator : estimators) {
    models.insert(estimator.simulator.model);
    if (estimator.simulator.model == model) of_model.push_back(&estimator);
  }
  if (of_model.empty()) {
    std::string shipped;
    for (const auto& name : models) shipped += (shipped.empty() ? "" : ", ") + name;
    throw UserError("bfhpo infer: --model " + model + ": no estimator of that model ships with bfhpo (in " +
                    estimators_folder().string() + ": " + (shipped.empty() ? "none" : shipped) +
                    "). Fix: give one of those, or train one: bfhpo init --data FILE --model " + model);
  }
  for (const auto* estimator : of_model)
    if (holds(estimator->simulator, shape)) return *estimator;
  std::string ranges;
  for (const auto* estimator : of_model) ranges += "; " + estimator->name + ": " + ranges_text(estimator->simulator);
  throw UserError("bfhpo infer: --model " + model + ": the data (" + std::to_string(shape.items) + " items, " +
                  std::to_string(shape.persons) + " persons, " + format_number(100.0 * shape.missing_share, 3) +
                  "% missing cells, " + std::to_string(shape.categories) +
                  " categories) lie outside every shipped estimator's ranges" + ranges +
                  ". Fix: train one for them: bfhpo init --data FILE --model " + model + ", then bfhpo train");
}

const ShippedEstimator& nearest_estimator(const std::vector<ShippedEstimator>& estimators, const std::string& model,
                                          const DataShape& shape) {
  const auto outside = [](double value, int64_t low, int64_t high) {  // log distance to [low, high]
    return std::max({0.0, std::log(static_cast<double>(low) / value), std::log(value / static_cast<double>(high))});
  };
  const ShippedEstimator* nearest = nullptr;
  double nearest_distance = 0.0;
  for (const auto& estimator : estimators) {
    const auto& simulator = estimator.simulator;
    if (simulator.model != model || (model == "grm" && simulator.n_categories != shape.categories)) continue;
    const auto& r = simulator.ranges;
    const double distance = outside(static_cast<double>(shape.items), r.min_items, r.max_items) +
                            outside(static_cast<double>(shape.persons), r.min_persons, r.max_persons);
    if (!nearest || distance < nearest_distance) nearest = &estimator, nearest_distance = distance;
  }
  if (!nearest)
    throw UserError("bfhpo init: --fine-tune: no estimator of the " + model + " model" +
                    (model == "grm" ? " with " + std::to_string(shape.categories) + " categories" : std::string()) +
                    " ships with bfhpo (in " + estimators_folder().string() +
                    "). Fix: leave --fine-tune out to train a fresh network");
  return *nearest;
}

std::string ranges_text(const models::SimulatorSpec& simulator) {
  const auto& r = simulator.ranges;
  std::string text = std::to_string(r.min_items) + "-" + std::to_string(r.max_items) + " items, " +
                     std::to_string(r.min_persons) + "-" + std::to_string(r.max_persons) + " persons, " +
                     (simulator.missing.any() ? "at most " + format_number(100.0 * simulator.missing.high, 3) +
                                                    "% missing cells"
                                              : std::string("no missing cells"));
  if (simulator.model == "grm") text += ", " + std::to_string(simulator.n_categories) + " categories";
  return text;
}

}  // namespace bfhpo::inference
