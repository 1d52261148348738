#include "trials/study_settings.hpp"

#include "common/config_reader.hpp"
#include "common/number_format.hpp"
#include "trials/trial_metrics.hpp"

#include <algorithm>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

// A ladder of chunk sizes: a list of whole numbers >= 1.
std::vector<int64_t> chunk_ladder(const ConfigSection& section, const std::string& key, const json& ladder,
                                  const std::string& example) {
  if (!ladder.is_array()) throw section.error(key, "expected a list, got " + ladder.dump(), "give e.g. " + example);
  std::vector<int64_t> sizes;
  for (std::size_t i = 0; i < ladder.size(); ++i)
    sizes.push_back(config_integer(ladder[i], section.source(), section.field(key) + "[" + std::to_string(i) + "]", 1));
  return sizes;
}

OomRetryOptions parse_oom_retry(ConfigSection section) {
  OomRetryOptions options;
  if (const auto n = section.integer("min_batch_size", 1)) options.min_batch_size = *n;
  if (const auto factor = section.number("backoff_factor")) options.backoff_factor = *factor;
  if (const json* ladder = section.find("item_chunk_ladder"))
    options.ladder.item_chunks = chunk_ladder(section, "item_chunk_ladder", *ladder, "[16, 8, 4, 2, 1]");
  if (const json* ladder = section.find("person_chunk_ladder"))
    options.ladder.person_chunks = chunk_ladder(section, "person_chunk_ladder", *ladder, "[1024, 256, 64]");
  section.reject_unknown_keys();
  section.check(options.problem());
  return options;
}

MemorySettings parse_memory(ConfigSection section) {
  MemorySettings memory;
  if (const json* budget = section.find("budget_mb")) {
    if (*budget == "auto") {
      memory.budget_auto = true;
    } else if (!budget->is_null()) {
      if (!budget->is_number())
        throw section.error("budget_mb", "expected a number of MB or \"auto\", got " + budget->dump(),
                            "give e.g. 4096 or \"auto\"");
      memory.budget_mb = config_number(*budget, section.source(), section.field("budget_mb"));
    }
  }
  if (const auto fraction = section.number("auto_fraction")) memory.auto_fraction = *fraction;
  if (const auto gate = section.boolean("gate")) memory.gate = *gate;
  if (const auto probe = section.boolean("probe")) memory.probe = *probe;
  if (auto oom_retry = section.section("oom_retry")) memory.oom_retry = parse_oom_retry(*oom_retry);
  section.reject_unknown_keys();
  section.check(memory.problem());
  return memory;
}

Objective parse_objective(const json& value, const std::string& source) {
  if (value == "val_nll") return {1.0, 0.0};
  if (value == "calibration_error") return {0.0, 1.0};
  if (!value.is_object())
    throw UserError::at(source, "objective", "unknown objective " + value.dump(),
                        "use \"val_nll\", \"calibration_error\" or {\"val_nll\": w1, \"calibration_error\": w2}");
  ConfigSection section(value, source, "objective");
  Objective objective{section.number("val_nll").value_or(0.0), section.number("calibration_error").value_or(0.0)};
  section.reject_unknown_keys();
  section.check(objective.problem());
  return objective;
}

}  // namespace

std::optional<double> MemorySettings::budget_for(int64_t device_total_bytes) const {
  if (budget_auto) return auto_fraction * static_cast<double>(device_total_bytes) / (1024.0 * 1024.0);
  return budget_mb;
}

std::string Objective::name() const {
  const auto term = [](double weight, const std::string& metric) {
    return weight == 1.0 ? metric : format_number(weight) + " " + metric;
  };
  if (calibration_error_weight == 0) return term(val_nll_weight, "val_nll");
  if (val_nll_weight == 0) return term(calibration_error_weight, "calibration_error");
  return term(val_nll_weight, "val_nll") + " + " + term(calibration_error_weight, "calibration_error");
}

double Objective::value(double val_nll, double calibration_error) const {
  double total = 0.0;
  if (val_nll_weight != 0) total += val_nll_weight * val_nll;
  if (calibration_error_weight != 0) total += calibration_error_weight * calibration_error;
  return total;
}

std::optional<ConfigProblem> MemorySettings::problem() const {
  if (budget_mb && !(*budget_mb > 0))
    return ConfigProblem{"budget_mb", "must be a positive number of MB, got " + format_exact(*budget_mb),
                         "give e.g. 4096 or \"auto\""};
  if (!(auto_fraction > 0 && auto_fraction <= 1))
    return ConfigProblem{"auto_fraction", "must be in (0, 1], got " + format_exact(auto_fraction), "give e.g. 0.9"};
  if (auto nested = oom_retry.problem()) return ConfigProblem{"oom_retry." + nested->field, nested->problem, nested->fix};
  return std::nullopt;
}

std::optional<ConfigProblem> Objective::problem() const {
  if (val_nll_weight < 0 || calibration_error_weight < 0 || (val_nll_weight == 0 && calibration_error_weight == 0))
    return ConfigProblem{"", "weights must be >= 0 and not all zero",
                         "give e.g. {\"val_nll\": 1, \"calibration_error\": 10}"};
  return std::nullopt;
}

StudySettings parse_study_settings(const hpo::StudySpec& study) {
  const std::string source = study.source.string();
  ConfigSection top(study.document, source, "");
  StudySettings settings;
  if (auto memory = top.section("memory")) settings.memory = parse_memory(*memory);
  if (const json* objective = top.find("objective")) settings.objective = parse_objective(*objective, source);
  check_trial_metrics(study);
  return settings;
}

void check_batch_sizes(const StudySettings& settings, const TrialConfig& fixed, const hpo::StudySpec& study) {
  int64_t largest = fixed.training.batch_size;
  std::string where = "training.batch_size " + std::to_string(largest);
  if (const hpo::ParamSpec* searched = study.search_space.find("training.batch_size")) {
    if (const auto* range = std::get_if<hpo::IntDistribution>(&searched->distribution)) largest = range->high;
    if (const auto* choices = std::get_if<hpo::CategoricalDistribution>(&searched->distribution))
      for (const auto& choice : choices->choices)
        if (choice.is_number()) largest = std::max(largest, choice.get<int64_t>());
    where = "the largest searched training.batch_size " + std::to_string(largest);
  }
  const int64_t minimum = settings.memory.oom_retry.min_batch_size;
  if (minimum > largest)
    throw UserError::at(study.source.string(), "memory.oom_retry.min_batch_size",
                        std::to_string(minimum) + " exceeds " + where + ": no trial could ever back off",
                        "give a min_batch_size <= " + std::to_string(largest));
}

}  // namespace bfhpo::trials
