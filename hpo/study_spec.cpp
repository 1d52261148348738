#include "hpo/study_spec.hpp"

#include "common/config_reader.hpp"
#include "common/user_error.hpp"
#include "hpo/pruner.hpp"
#include "hpo/sampler_factory.hpp"
#include "hpo/storage/optuna_rdb_schema.hpp"
#include "hpo/storage/postgres_url.hpp"

#include <algorithm>

namespace bfhpo::hpo {

using nlohmann::json;

namespace {

// Optuna's RDB schema keeps a study's and a parameter's name in at most
// kOptunaNameCharacters characters; a longer one is refused before anything
// is written.
void check_names_fit_postgres(const StudySpec& spec) {
  if (!is_postgres_url(spec.storage.string())) return;
  const auto characters = [](const std::string& utf8) {
    return static_cast<std::size_t>(
        std::count_if(utf8.begin(), utf8.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  };
  const auto refuse = [&](const std::string& field, std::size_t length, const std::string& fix) {
    throw UserError::at(spec.source.string(), field,
                        "is " + std::to_string(length) + " characters long; a PostgreSQL storage (Optuna's schema) "
                        "holds at most " + std::to_string(kOptunaNameCharacters),
                        fix);
  };
  if (characters(spec.name) > kOptunaNameCharacters)
    refuse("name", characters(spec.name), "shorten \"name\" to at most 512 characters");
  if (const auto space = spec.document.find("search_space"); space != spec.document.end())
    for (const auto& parameter : space->items())
      if (characters(parameter.key()) > kOptunaNameCharacters)
        refuse("search_space." + parameter.key().substr(0, 40) + "...", characters(parameter.key()),
               "shorten the parameter's name");
}

// Writing trials into the study file would destroy it.
bool names_study_file(const std::filesystem::path& storage, const std::filesystem::path& source) {
  std::error_code same_error;
  return std::filesystem::equivalent(storage, source, same_error);
}

}  // namespace

StudySpec load_study_spec(const std::filesystem::path& file, const std::optional<std::string>& storage_override) {
  StudySpec spec = parse_study_spec(read_config_file(file, "study file"), file);
  if (storage_override) {
    if (storage_override->empty())
      throw UserError("--storage: empty. Fix: give a journal path or a postgresql:// URL");
    spec.storage = *storage_override;
    if (names_study_file(spec.storage, file))
      throw UserError("--storage " + printable_storage(*storage_override) + ": names the study file " +
                      file.string() + " itself; writing trials there would destroy it. Fix: give e.g. --storage " +
                      file.filename().string() + ".journal");
  }
  check_names_fit_postgres(spec);
  return spec;
}

StudySpec parse_study_spec(const json& document, const std::filesystem::path& source) {
  const std::string file = source.string();
  ConfigSection top(document, file, "");
  StudySpec spec;
  spec.source = source;
  spec.document = document;

  const auto name = top.string("name");
  if (!name) throw top.error("name", "missing", "add \"name\": \"my-study\"");
  if (std::any_of(name->begin(), name->end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    throw top.error("name", "holds a control character (" + json(*name).dump() +
                                "); storages and terminals cut or garble such names",
                    "use letters, digits, spaces and punctuation only");
  spec.name = *name;
  spec.objectives = parse_objectives(top);
  spec.constraints = parse_constraints(top);
  if (const auto n_trials = top.int32("n_trials", 1)) spec.n_trials = *n_trials;
  if (const json* timeout = top.find("timeout_s"); timeout && !timeout->is_null()) {
    spec.timeout_s = config_number(*timeout, file, "timeout_s");
    if (!(*spec.timeout_s > 0))
      throw top.error("timeout_s", "must be a positive number of seconds", "write e.g. \"timeout_s\": 3600");
  }
  if (const auto seed = top.integer("seed", 0)) spec.seed = static_cast<std::uint64_t>(*seed);
  for (const char* section_name : {"sampler", "pruner"}) {
    auto section = top.section(section_name);
    if (!section) continue;
    if (!section->find("type"))
      throw section->error("type", "missing",
                           std::string("write \"") + section_name + "\": {\"type\": \"" +
                               (std::string(section_name) == "sampler" ? "tpe" : "median") + "\", ...}");
    (std::string(section_name) == "sampler" ? spec.sampler : spec.pruner) = document[section_name];
  }
  const json* search_space = top.find("search_space");
  spec.search_space = SearchSpace::from_json(search_space ? *search_space : json::object(), file);
  if (const auto storage = top.string("storage")) {
    const std::filesystem::path path = *storage;
    spec.storage = is_postgres_url(*storage) || path.is_absolute() ? path : source.parent_path() / path;
  } else {
    spec.storage = source;
    spec.storage += ".journal";
  }
  if (names_study_file(spec.storage, source))
    throw top.error("storage", "names the study file itself; writing trials there would destroy the study file",
                    "write e.g. \"storage\": \"" + source.filename().string() + ".journal\"");
  if (const auto stale = top.number("stale_after_s")) {
    if (!(*stale >= 20))
      throw top.error("stale_after_s", "must be at least 20 seconds (two heartbeats of a worker)",
                      "write e.g. \"stale_after_s\": 120");
    spec.stale_after_s = *stale;
  }
  top.allow({"simulator", "training", "approximator", "memory", "objective", "weights_dir"});
  top.reject_unknown_keys();
  // Each reads and checks its own section (unknown keys included).
  make_sampler(spec);
  make_pruner(spec.pruner, file);
  if (!spec.has_simulator())
    for (std::size_t i = 0; i < spec.constraints.size(); ++i) {
      const std::string& metric = spec.constraints[i].metric;
      if (std::none_of(spec.objectives.begin(), spec.objectives.end(),
                       [&](const ObjectiveSpec& o) { return o.metric == metric; }))
        throw top.error("constraints[" + std::to_string(i) + "]",
                        "names \"" + metric + "\", which this study never reports: an external-objective study "
                        "reports only its objectives' values",
                        "name an objective's metric, or leave \"constraints\" out and pass each trial's "
                        "constraint values with `bfhpo tell --constraints`");
    }
  if (spec.multi_objective() && spec.pruner.value("type", "none") != "none")
    throw UserError::at(file, "pruner",
                        "a study of " + std::to_string(spec.objectives.size()) +
                            " objectives cannot prune: a trial's intermediate values rank it on one scale, "
                            "and several objectives have no single one (Optuna's Trial.report refuses them too)",
                        "drop \"pruner\", or optimize one objective and state the others as \"constraints\"");
  return spec;
}

Directions StudySpec::directions() const {
  Directions directions;
  for (const ObjectiveSpec& objective : objectives) directions.push_back(objective.direction);
  return directions;
}

void StudySpec::require_search_space(const std::string& verb) const {
  if (!search_space.params().empty()) return;
  std::string fix = "add e.g. \"search_space\": {\"training.learning_rate\": {\"type\": \"float\", \"low\": 3e-4, "
                    "\"high\": 3e-3, \"log\": true}}";
  if (has_simulator()) fix += ", or train the study's one configuration with `bfhpo train " + source.string() + "`";
  throw UserError::at(source.string(), "search_space",
                      "missing or empty; `bfhpo " + verb + "` proposes each trial's values from it", fix);
}

}  // namespace bfhpo::hpo
