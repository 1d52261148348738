#include "trials/study_settings.hpp"

#include "common/closest_name.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cmath>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

double positive_number(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_number() || value.get<double>() <= 0)
    throw UserError::at(source, field, "expected a positive number, got " + value.dump(), "give a number > 0");
  return value.get<double>();
}

bool boolean(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_boolean()) throw UserError::at(source, field, "expected true or false, got " + value.dump(), "give true or false");
  return value.get<bool>();
}

void reject_unknown(const json& section, const std::string& name, const std::vector<std::string>& known,
                    const std::string& source) {
  for (const auto& item : section.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      throw UserError::at(source, name + "." + item.key(), "unknown option",
                          "did you mean '" + name + "." + closest_name(item.key(), known) + "'?");
}

OomRetryOptions parse_oom_retry(const json& section, const std::string& source) {
  if (!section.is_object()) throw UserError::at(source, "memory.oom_retry", "expected an object", "see the README");
  reject_unknown(section, "memory.oom_retry", {"min_batch_size", "backoff_factor", "item_chunk_ladder"}, source);
  OomRetryOptions options;
  if (section.contains("min_batch_size")) {
    const double n = positive_number(section["min_batch_size"], source, "memory.oom_retry.min_batch_size");
    if (n != std::floor(n))
      throw UserError::at(source, "memory.oom_retry.min_batch_size", "expected a whole number", "give e.g. 4");
    options.min_batch_size = static_cast<int64_t>(n);
  }
  if (section.contains("backoff_factor")) {
    options.backoff_factor = positive_number(section["backoff_factor"], source, "memory.oom_retry.backoff_factor");
    if (options.backoff_factor <= 1.0)
      throw UserError::at(source, "memory.oom_retry.backoff_factor", "must be > 1", "give e.g. 2");
  }
  if (section.contains("item_chunk_ladder")) {
    const json& ladder = section["item_chunk_ladder"];
    if (!ladder.is_array())
      throw UserError::at(source, "memory.oom_retry.item_chunk_ladder", "expected a list", "give e.g. [16, 8, 4]");
    options.item_chunk_ladder.clear();
    for (const auto& chunk : ladder) {
      const double n = positive_number(chunk, source, "memory.oom_retry.item_chunk_ladder");
      if (n != std::floor(n) || (!options.item_chunk_ladder.empty() && n >= options.item_chunk_ladder.back()))
        throw UserError::at(source, "memory.oom_retry.item_chunk_ladder", "expected decreasing whole numbers",
                            "give e.g. [16, 8, 4, 2, 1]");
      options.item_chunk_ladder.push_back(static_cast<int64_t>(n));
    }
  }
  return options;
}

MemorySettings parse_memory(const json& section, const std::string& source) {
  if (!section.is_object()) throw UserError::at(source, "memory", "expected an object", "see the README");
  reject_unknown(section, "memory", {"budget_mb", "auto_fraction", "gate", "probe", "oom_retry"}, source);
  MemorySettings memory;
  if (section.contains("budget_mb")) {
    if (section["budget_mb"] == "auto") {
      memory.budget_auto = true;
    } else if (!section["budget_mb"].is_null()) {
      if (!section["budget_mb"].is_number() || section["budget_mb"].get<double>() <= 0)
        throw UserError::at(source, "memory.budget_mb", "expected a positive number of MB or \"auto\", got " +
                            section["budget_mb"].dump(), "give e.g. 4096 or \"auto\"");
      memory.budget_mb = section["budget_mb"].get<double>();
    }
  }
  if (section.contains("auto_fraction")) {
    memory.auto_fraction = positive_number(section["auto_fraction"], source, "memory.auto_fraction");
    if (memory.auto_fraction > 1)
      throw UserError::at(source, "memory.auto_fraction", "must be in (0, 1]", "give e.g. 0.9");
  }
  if (section.contains("gate")) memory.gate = boolean(section["gate"], source, "memory.gate");
  if (section.contains("probe")) memory.probe = boolean(section["probe"], source, "memory.probe");
  if (section.contains("oom_retry")) memory.oom_retry = parse_oom_retry(section["oom_retry"], source);
  return memory;
}

Objective parse_objective(const json& value, const std::string& source) {
  Objective objective;
  if (value == "val_nll") return objective;
  if (value == "calibration_error") return {0.0, 1.0};
  if (value.is_object()) {
    reject_unknown(value, "objective", {"val_nll", "calibration_error"}, source);
    objective.val_nll_weight = value.value("val_nll", 0.0);
    objective.calibration_error_weight = value.value("calibration_error", 0.0);
    if (!value.value("val_nll", json(0)).is_number() || !value.value("calibration_error", json(0)).is_number() ||
        (objective.val_nll_weight == 0 && objective.calibration_error_weight == 0))
      throw UserError::at(source, "objective", "weights must be numbers, not all zero",
                          "give e.g. {\"val_nll\": 1, \"calibration_error\": 10}");
    return objective;
  }
  throw UserError::at(source, "objective", "unknown objective " + value.dump(),
                      "use \"val_nll\", \"calibration_error\" or {\"val_nll\": w1, \"calibration_error\": w2}");
}

}  // namespace

std::optional<double> MemorySettings::budget_for(int64_t device_total_bytes) const {
  if (budget_auto) return auto_fraction * static_cast<double>(device_total_bytes) / (1024.0 * 1024.0);
  return budget_mb;
}

double Objective::value(double val_nll, double calibration_error) const {
  double total = 0.0;
  if (val_nll_weight != 0) total += val_nll_weight * val_nll;
  if (calibration_error_weight != 0) total += calibration_error_weight * calibration_error;
  return total;
}

StudySettings parse_study_settings(const hpo::StudySpec& study) {
  const std::string source = study.source.string();
  StudySettings settings;
  if (study.document.contains("memory")) settings.memory = parse_memory(study.document["memory"], source);
  if (study.document.contains("objective")) settings.objective = parse_objective(study.document["objective"], source);
  return settings;
}

}  // namespace bfhpo::trials
