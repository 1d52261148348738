#include "trials/trial_config.hpp"

#include "common/closest_name.hpp"
#include "common/user_error.hpp"

#include <algorithm>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

const std::vector<std::string>& training_fields() {
  static const std::vector<std::string> names{"epochs",         "num_batches",     "batch_size", "learning_rate",
                                              "warmup_fraction", "clip_grad_norm", "validation_sims", "device"};
  return names;
}

double number_at(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_number()) throw UserError::at(source, field, "expected a number, got " + value.dump(), "give a number");
  return value.get<double>();
}

int64_t integer_at(const json& value, const std::string& source, const std::string& field, int64_t minimum) {
  const double x = number_at(value, source, field);
  if (x != static_cast<double>(static_cast<int64_t>(x)) || x < static_cast<double>(minimum))
    throw UserError::at(source, field, "expected an integer >= " + std::to_string(minimum) + ", got " + value.dump(),
                        "give a whole number >= " + std::to_string(minimum));
  return static_cast<int64_t>(x);
}

void set_training_field(TrialConfig& config, const std::string& key, const json& value, const std::string& source) {
  const std::string field = "training." + key;
  TrainingOptions& t = config.training;
  if (key == "epochs") {
    t.epochs = static_cast<int>(integer_at(value, source, field, 1));
  } else if (key == "num_batches") {
    t.num_batches = static_cast<int>(integer_at(value, source, field, 1));
  } else if (key == "batch_size") {
    t.batch_size = integer_at(value, source, field, 1);
  } else if (key == "validation_sims") {
    t.validation_sims = integer_at(value, source, field, 1);
  } else if (key == "learning_rate") {
    t.learning_rate = number_at(value, source, field);
    if (t.learning_rate <= 0) throw UserError::at(source, field, "must be positive", "give e.g. 5e-4");
  } else if (key == "warmup_fraction") {
    t.warmup_fraction = number_at(value, source, field);
    if (t.warmup_fraction < 0 || t.warmup_fraction >= 1)
      throw UserError::at(source, field, "must be in [0, 1)", "give e.g. 0.05");
  } else if (key == "clip_grad_norm") {
    t.clip_grad_norm = number_at(value, source, field);
  } else if (key == "device") {
    if (!value.is_string()) throw UserError::at(source, field, "expected a string", "use \"auto\", \"cpu\" or \"cuda\"");
    config.device = value.get<std::string>();
    resolve_device(config.device, source);
  } else {
    throw UserError::at(source, field, "unknown training option",
                        "did you mean 'training." + closest_name(key, training_fields()) + "'?");
  }
}

std::pair<int64_t, int64_t> range_at(const json& section, const char* key, std::pair<int64_t, int64_t> fallback,
                                     const std::string& source) {
  if (!section.contains(key)) return fallback;
  const std::string field = std::string("simulator.") + key;
  const json& value = section[key];
  if (value.is_number()) {
    const int64_t n = integer_at(value, source, field, 1);
    return {n, n};
  }
  if (!value.is_array() || value.size() != 2)
    throw UserError::at(source, field, "expected [low, high] or a number", "give e.g. [15, 50]");
  const int64_t low = integer_at(value[0], source, field, 1);
  const int64_t high = integer_at(value[1], source, field, 1);
  if (low > high) throw UserError::at(source, field, "low > high", "give [low, high] with low <= high");
  return {low, high};
}

void read_simulator(TrialConfig& config, const json& section, const std::string& source) {
  if (!section.is_object()) throw UserError::at(source, "simulator", "expected an object", "see the README");
  for (const auto& [key, value] : section.items()) {
    if (key == "model") {
      if (value != "2pl") throw UserError::at(source, "simulator.model", "unknown model " + value.dump(), "use \"2pl\"");
    } else if (key != "n_items" && key != "n_persons") {
      throw UserError::at(source, "simulator." + key, "unknown simulator option",
                          "did you mean 'simulator." + closest_name(key, {"model", "n_items", "n_persons"}) + "'?");
    }
  }
  auto& r = config.ranges;
  std::tie(r.min_items, r.max_items) = range_at(section, "n_items", {r.min_items, r.max_items}, source);
  std::tie(r.min_persons, r.max_persons) = range_at(section, "n_persons", {r.min_persons, r.max_persons}, source);
}

void read_approximator(TrialConfig& config, const json& section, const std::string& source) {
  if (!section.is_object()) throw UserError::at(source, "approximator", "expected an object", "see the README");
  json spec = section;
  if (spec.contains("calibrated")) {
    if (!spec["calibrated"].is_boolean())
      throw UserError::at(source, "approximator.calibrated", "expected true or false", "give true or false");
    spec["calibration.enabled"] = spec["calibrated"];
    spec.erase("calibrated");
  }
  config.approximator = models::approximator_spec_from_json(spec, source);
}

// A param name: "training.x" or an ApproximatorSpec field.
void apply_param(TrialConfig& config, const std::string& name, const json& value, const std::string& source) {
  if (name.rfind("training.", 0) == 0) {
    set_training_field(config, name.substr(9), value, source);
  } else {
    models::set_spec_field(config.approximator, name, value, source);
  }
}

}  // namespace

torch::Device resolve_device(const std::string& device, const std::string& source) {
  if (device == "cpu") return torch::kCPU;
  if (device == "cuda" || device == "auto") {
    if (torch::cuda::is_available()) return torch::kCUDA;
    if (device == "auto") return torch::kCPU;
    throw UserError::at(source, "training.device", "\"cuda\" asked but no CUDA device is available",
                        "use \"auto\" or \"cpu\"");
  }
  throw UserError::at(source, "training.device", "unknown device \"" + device + "\"", "use \"auto\", \"cpu\" or \"cuda\"");
}

TrialConfig parse_trial_config(const json& document, const std::string& source) {
  TrialConfig config;
  if (document.contains("simulator")) read_simulator(config, document["simulator"], source);
  if (document.contains("training")) {
    if (!document["training"].is_object()) throw UserError::at(source, "training", "expected an object", "see the README");
    for (const auto& [key, value] : document["training"].items()) set_training_field(config, key, value, source);
  }
  if (document.contains("approximator")) read_approximator(config, document["approximator"], source);
  return config;
}

json TrialConfig::to_json() const {
  json out;
  out["simulator"] = {{"model", "2pl"},
                      {"n_items", {ranges.min_items, ranges.max_items}},
                      {"n_persons", {ranges.min_persons, ranges.max_persons}}};
  out["training"] = {{"epochs", training.epochs},
                     {"num_batches", training.num_batches},
                     {"batch_size", training.batch_size},
                     {"learning_rate", training.learning_rate},
                     {"warmup_fraction", training.warmup_fraction},
                     {"clip_grad_norm", training.clip_grad_norm},
                     {"validation_sims", training.validation_sims},
                     {"device", device}};
  out["approximator"] = models::to_json(approximator);
  return out;
}

TrialConfig study_trial_config(const hpo::StudySpec& study) {
  const std::string source = study.source.string();
  TrialConfig config = parse_trial_config(study.document, source);
  config.training.seed = study.seed;
  std::vector<std::string> searchable = models::approximator_field_names();
  for (const auto& name : training_fields())
    if (name != "device") searchable.push_back("training." + name);
  for (const auto& param : study.search_space.params()) {
    if (std::find(searchable.begin(), searchable.end(), param.name) == searchable.end())
      throw UserError::at(source, "search_space." + param.name, "does not name a training or approximator field",
                          "did you mean '" + closest_name(param.name, searchable) + "'?");
  }
  return config;
}

TrialConfig with_params(TrialConfig fixed, const json& params, const std::string& params_source) {
  if (!params.is_object())
    throw UserError::at(params_source, "params", "expected an object {\"name\": value}", "give {\"flow.depth\": 4, ...}");
  for (const auto& [name, value] : params.items()) apply_param(fixed, name, value, params_source);
  models::validate(fixed.approximator, params_source);
  return fixed;
}

TrialConfig make_trial_config(const hpo::StudySpec& study, const json& params, const std::string& params_source) {
  return with_params(study_trial_config(study), params, params_source);
}

}  // namespace bfhpo::trials
