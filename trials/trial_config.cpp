#include "trials/trial_config.hpp"

#include "common/config_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace bfhpo::trials {
namespace {

using nlohmann::json;

const std::vector<std::string>& training_fields() {
  static const std::vector<std::string> names{"epochs",         "num_batches",     "batch_size", "learning_rate",
                                              "warmup_fraction", "clip_grad_norm", "validation_sims", "device",
                                              "threads",         "initial_weights"};
  return names;
}

void set_training_field(TrialConfig& config, const std::string& key, const json& value, const std::string& source) {
  const std::string field = "training." + key;
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  TrainingOptions& t = config.training;
  if (key == "epochs") {
    t.epochs = static_cast<int>(config_integer(value, source, field, 1, kMaxInt));
  } else if (key == "num_batches") {
    t.num_batches = static_cast<int>(config_integer(value, source, field, 1, kMaxInt));
  } else if (key == "batch_size") {
    t.batch_size = config_integer(value, source, field, 1);
  } else if (key == "threads") {
    t.threads = static_cast<int>(config_integer(value, source, field, 1, kMaxInt));
  } else if (key == "validation_sims") {
    t.validation_sims = config_integer(value, source, field, 1);
  } else if (key == "learning_rate") {
    t.learning_rate = config_number(value, source, field);
  } else if (key == "warmup_fraction") {
    t.warmup_fraction = config_number(value, source, field);
  } else if (key == "clip_grad_norm") {
    t.clip_grad_norm = config_number(value, source, field);
  } else if (key == "initial_weights") {
    if (!value.is_string() || value.get<std::string>().empty())
      throw UserError::at(source, field, "expected the path of a weights.pt",
                          "give the weights.pt of a folder `bfhpo train` wrote, e.g. estimators/2pl/weights.pt");
    // Relative to the file that names it, kept absolute: the written config.json reads back the same file.
    const std::filesystem::path path = value.get<std::string>();
    t.initial_weights =
        (path.is_absolute() ? path : std::filesystem::absolute(std::filesystem::path(source).parent_path() / path))
            .lexically_normal()
            .string();
  } else if (key == "device") {
    if (!value.is_string()) throw UserError::at(source, field, "expected a string", "use \"auto\", \"cpu\" or \"cuda\"");
    config.device = value.get<std::string>();
    if (config.device != "auto" && config.device != "cpu" && config.device != "cuda")
      throw UserError::at(source, field, "unknown device \"" + config.device + "\"", "use \"auto\", \"cpu\" or \"cuda\"");
  } else {
    throw std::logic_error("set_training_field: unchecked name " + field);
  }
}

// Once every training field of a file is set: the steps check needs epochs and num_batches together.
void check_training(const TrialConfig& config, const std::string& source) {
  if (const auto problem = config.training.problem())
    throw UserError::at(source, "training." + problem->field, problem->problem, problem->fix);
}

void read_simulator(TrialConfig& config, ConfigSection section) {
  config.simulator = models::simulator_spec_from_config(std::move(section));
}

void read_training(TrialConfig& config, ConfigSection section) {
  for (const auto& key : training_fields())
    if (const json* value = section.find(key)) set_training_field(config, key, *value, section.source());
  section.reject_unknown_keys();
  check_training(config, section.source());
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

// The approximator fields the simulator's model decides.
bool is_model_field(const std::string& name) { return name == "param_dim" || name == "n_categories"; }

// The approximator takes the model's target dimension and response categories;
// a study file that gives others is refused.
void match_model(TrialConfig& config, const json& document, const std::string& source) {
  const auto param_dim = static_cast<int64_t>(models::item_parameter_names(config.simulator).size());
  const std::pair<const char*, int64_t> fields[] = {{"param_dim", param_dim},
                                                    {"n_categories", config.simulator.n_categories}};
  for (const auto& [name, value] : fields) {
    const json* approximator = document.is_object() && document.contains("approximator") ? &document["approximator"] : nullptr;
    if (approximator && approximator->is_object() && approximator->contains(name) && (*approximator)[name] != value)
      throw UserError::at(source, std::string("approximator.") + name,
                          "model \"" + config.simulator.model + "\" has " + std::to_string(value) + ", got " +
                              (*approximator)[name].dump(),
                          "remove it: simulator.model decides it");
  }
  config.approximator.param_dim = param_dim;
  config.approximator.n_categories = config.simulator.n_categories;
}

std::vector<std::string> searchable_names() {
  std::vector<std::string> names;
  for (const auto& name : models::approximator_field_names())
    if (!is_model_field(name)) names.push_back(name);
  for (const auto& name : training_fields())
    if (name != "device" && name != "initial_weights") names.push_back("training." + name);
  return names;
}

// A param name: "training.x" or an ApproximatorSpec field.
void apply_param(TrialConfig& config, const std::string& name, const json& value, const std::string& source) {
  const std::vector<std::string> names = searchable_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UserError::at(source, name, "does not name a training or approximator field",
                        "did you mean '" + closest_name(name, names) + "'?");
  if (name.rfind("training.", 0) == 0) {
    set_training_field(config, name.substr(9), value, source);
  } else {
    models::set_spec_field(config.approximator, name, value, source);
  }
}

}  // namespace

uint64_t trial_seed(uint64_t study_seed, int number) { return study_seed + static_cast<uint64_t>(number); }

TrialConfig parse_trial_config(const json& document, const std::string& source) {
  TrialConfig config;
  ConfigSection top(document, source, "");
  if (const auto seed = top.integer("seed", 0)) config.training.seed = static_cast<uint64_t>(*seed);
  if (auto simulator = top.section("simulator")) read_simulator(config, *simulator);
  if (auto training = top.section("training")) read_training(config, *training);
  if (const json* approximator = top.find("approximator")) read_approximator(config, *approximator, source);
  match_model(config, document, source);
  return config;
}

json TrialConfig::to_json() const {
  json out;
  out["seed"] = training.seed;
  out["simulator"] = simulator.to_json();
  out["training"] = {{"epochs", training.epochs},
                     {"num_batches", training.num_batches},
                     {"batch_size", training.batch_size},
                     {"learning_rate", training.learning_rate},
                     {"warmup_fraction", training.warmup_fraction},
                     {"clip_grad_norm", training.clip_grad_norm},
                     {"validation_sims", training.validation_sims},
                     {"device", device}};
  if (training.threads > 0) out["training"]["threads"] = training.threads;
  if (!training.initial_weights.empty()) out["training"]["initial_weights"] = training.initial_weights;
  out["approximator"] = models::to_json(approximator);
  return out;
}

TrialConfig study_trial_config(const hpo::StudySpec& study) {
  const std::string source = study.source.string();
  TrialConfig config = parse_trial_config(study.document, source);
  config.training.seed = study.seed;
  if (!config.training.initial_weights.empty() && !std::filesystem::is_regular_file(config.training.initial_weights))
    throw UserError::at(source, "training.initial_weights", config.training.initial_weights + ": no such file",
                        "give the weights.pt of a folder `bfhpo train` wrote, e.g. estimators/2pl/weights.pt");
  // Every searched value is checked now, before a journal or a trial exists:
  // every choice, or the range's ends and, for a float, a value inside (so a
  // float range on an integer field is refused), each in the fixed config.
  const std::vector<std::string> searchable = searchable_names();
  for (const auto& param : study.search_space.params()) {
    if (std::find(searchable.begin(), searchable.end(), param.name) == searchable.end())
      throw UserError::at(source, "search_space." + param.name, "does not name a training or approximator field",
                          "did you mean '" + closest_name(param.name, searchable) + "'?");
    if (!config.training.initial_weights.empty() && param.name.rfind("training.", 0) != 0)
      throw UserError::at(source, "search_space." + param.name,
                          "changes the network, whose weights training.initial_weights fixes",
                          "search training.* only (the learning rate, the batch size), or remove "
                          "training.initial_weights");
    std::vector<json> values;
    std::visit(
        [&](const auto& d) {
          using D = std::decay_t<decltype(d)>;
          if constexpr (std::is_same_v<D, hpo::CategoricalDistribution>) {
            values = d.choices;
          } else {
            values = {json(d.low), json(d.high)};
            if constexpr (std::is_same_v<D, hpo::FloatDistribution>)
              values.push_back(json(d.step ? d.low + *d.step : d.low + 0.381966 * (d.high - d.low)));
          }
        },
        param.distribution);
    for (const json& value : values) {
      TrialConfig probe = config;
      const std::string probe_source = source + ": search_space." + param.name + " value " + value.dump();
      apply_param(probe, param.name, value, probe_source);
      check_training(probe, probe_source);
    }
  }
  return config;
}

TrialConfig with_params(TrialConfig fixed, const json& params, const std::string& params_source) {
  if (!params.is_object())
    throw UserError::at(params_source, "params", "expected an object {\"name\": value}", "give {\"flow.depth\": 4, ...}");
  for (const auto& [name, value] : params.items()) apply_param(fixed, name, value, params_source);
  check_training(fixed, params_source);
  models::validate(fixed.approximator, params_source);
  return fixed;
}

TrialConfig make_trial_config(const hpo::StudySpec& study, const json& params, const std::string& params_source) {
  return with_params(study_trial_config(study), params, params_source);
}

}  // namespace bfhpo::trials
