#include "hpo/study_spec.hpp"

#include "common/json_file.hpp"
#include "common/user_error.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

namespace bfhpo::hpo {

using nlohmann::json;

StudySpec load_study_spec(const std::filesystem::path& file) {
  return parse_study_spec(read_json_file(file, "study file"), file);
}

StudySpec parse_study_spec(const json& document, const std::filesystem::path& source) {
  const std::string file = source.string();
  if (!document.is_object())
    throw UserError::at(file, "", "the study file must hold a JSON object", "start it with {\"name\": ...}");
  StudySpec spec;
  spec.source = source;
  spec.document = document;

  if (!document.contains("name") || !document["name"].is_string() || document["name"].get<std::string>().empty())
    throw UserError::at(file, "name", "missing or not a string", "add \"name\": \"my-study\"");
  spec.name = document["name"].get<std::string>();

  const std::string direction = document.value("direction", std::string("minimize"));
  if (direction == "minimize") spec.direction = StudyDirection::Minimize;
  else if (direction == "maximize") spec.direction = StudyDirection::Maximize;
  else throw UserError::at(file, "direction", "'" + direction + "' is not a direction", "use \"minimize\" or \"maximize\"");

  if (document.contains("n_trials")) {
    const json& n = document["n_trials"];
    if (!n.is_number_integer() || n.get<long long>() < 1)
      throw UserError::at(file, "n_trials", "must be a positive integer, got " + n.dump(), "write e.g. \"n_trials\": 100");
    spec.n_trials = n.get<int>();
  }
  if (document.contains("timeout_s") && !document["timeout_s"].is_null()) {
    const json& t = document["timeout_s"];
    if (!t.is_number() || !(t.get<double>() > 0))
      throw UserError::at(file, "timeout_s", "must be a positive number of seconds", "write e.g. \"timeout_s\": 3600");
    spec.timeout_s = t.get<double>();
  }
  if (document.contains("seed")) {
    const json& s = document["seed"];
    if (!s.is_number_integer() || s.get<long long>() < 0)
      throw UserError::at(file, "seed", "must be a non-negative integer", "write e.g. \"seed\": 1");
    spec.seed = s.get<std::uint64_t>();
  }
  for (const char* section : {"sampler", "pruner"}) {
    if (!document.contains(section)) continue;
    const json& s = document[section];
    if (!s.is_object() || !s.contains("type") || !s["type"].is_string())
      throw UserError::at(file, std::string(section) + ".type", "missing",
                          std::string("write \"") + section + "\": {\"type\": \"" +
                              (std::string(section) == "sampler" ? "tpe" : "median") + "\"}");
    (std::string(section) == "sampler" ? spec.sampler : spec.pruner) = s;
  }
  const std::string sampler = spec.sampler["type"];
  if (sampler != "tpe" && sampler != "random")
    throw UserError::at(file, "sampler.type", "unknown sampler '" + sampler + "'", "use \"tpe\" or \"random\"");
  const std::string pruner = spec.pruner["type"];
  if (pruner != "none" && pruner != "median" && pruner != "successive_halving")
    throw UserError::at(file, "pruner.type", "unknown pruner '" + pruner + "'",
                        "use \"none\", \"median\" or \"successive_halving\"");

  spec.search_space = SearchSpace::from_json(document.value("search_space", json()), file);

  if (document.contains("storage")) {
    if (!document["storage"].is_string() || document["storage"].get<std::string>().empty())
      throw UserError::at(file, "storage", "must be a file path", "write e.g. \"storage\": \"demo.journal\"");
    std::filesystem::path storage = document["storage"].get<std::string>();
    spec.storage = storage.is_absolute() ? storage : source.parent_path() / storage;
  } else {
    spec.storage = source;
    spec.storage += ".journal";
  }
  return spec;
}

}  // namespace bfhpo::hpo
