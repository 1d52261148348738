#include "report/trial_facts.hpp"

#include "hpo/study.hpp"
#include "hpo/trial_attrs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bfhpo::report {
namespace {

using nlohmann::json;

// The string at `key` of an object bfhpo wrote, "" when absent or not a string.
std::string string_in(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `significant` digits, as a JSON number.
json rounded(std::optional<double> value, int significant) {
  if (!value || !std::isfinite(*value)) return json();
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", significant, *value);
  return std::strtod(text, nullptr);
}

// Rounded to `decimals` places, as a JSON number.
json fixed(std::optional<double> value, int decimals) {
  if (!value || !std::isfinite(*value)) return json();
  const double scale = std::pow(10.0, decimals);
  return std::round(*value * scale) / scale;
}

// Diagnostics as models::Diagnostics::to_json writes them: "parameters", a list of objects with a "name".
bool has_named_parameters(const json& diagnostics) {
  const auto parameters = diagnostics.find("parameters");
  if (parameters == diagnostics.end() || !parameters->is_array()) return false;
  return std::all_of(parameters->begin(), parameters->end(),
                     [](const json& p) { return p.is_object() && p.contains("name") && p["name"].is_string(); });
}

}  // namespace

std::string memory_in_words(const json& memory) {
  const json chunk = memory.value("item_chunk_size", json());
  std::string text = chunk.is_number() ? "chunk " + chunk.dump() : std::string("chunk none");
  const json persons = memory.value("person_chunk_size", json());
  if (persons.is_number()) text += ", " + persons.dump() + " persons a chunk";
  const auto checkpointing = memory.find("gradient_checkpointing");
  if (checkpointing != memory.end() && *checkpointing == true) text += ", checkpointing";
  return text;
}

std::string TrialFacts::trained_config() const {
  if (!batch_size) return "";
  return "batch " + std::to_string(*batch_size) + ", " +
         memory_in_words({{"item_chunk_size", item_chunk_size ? json(*item_chunk_size) : json()},
                          {"person_chunk_size", person_chunk_size ? json(*person_chunk_size) : json()},
                          {"gradient_checkpointing", gradient_checkpointing}});
}

std::size_t ranked_objective(const hpo::StudySpec& spec) {
  for (std::size_t i = 0; i < spec.objectives.size(); ++i)
    if (spec.objectives[i].metric != "measured_peak_mb") return i;
  return 0;
}

hpo::StudyDirection ranked_direction(const hpo::StudySpec& spec) {
  return spec.objectives[ranked_objective(spec)].direction;
}

std::optional<hpo::FrozenTrial> ranked_best(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials) {
  return hpo::best_of(trials, ranked_direction(spec), ranked_objective(spec));
}

TrialFacts trial_facts(const hpo::FrozenTrial& trial, std::size_t objective) {
  TrialFacts facts;
  facts.number = trial.number;
  facts.state = trial.state;
  if (objective < trial.values.size()) facts.value = trial.values[objective];
  facts.feasible = hpo::is_feasible(trial);
  facts.intermediate_values = trial.intermediate_values;
  facts.reason = hpo::string_attr(trial, hpo::kFailReasonAttr).value_or("");
  facts.seconds = hpo::number_attr(trial, "bfhpo:seconds");
  facts.estimated_peak_mb = hpo::number_attr(trial, "bfhpo:estimated_peak_mb");
  facts.measured_peak_mb = hpo::number_attr(trial, "bfhpo:measured_peak_mb");
  facts.budget_mb = hpo::number_attr(trial, "bfhpo:budget_mb");
  if (const json* gate = hpo::system_attr(trial, "bfhpo:gate", hpo::AttrType::Object)) {
    facts.gate = string_in(*gate, "decision");
    if (gate->contains("chosen") && (*gate)["chosen"].is_object()) facts.gate_memory = memory_in_words((*gate)["chosen"]);
  }
  facts.batch_size = hpo::integer_attr(trial, "bfhpo:batch_size");
  facts.item_chunk_size = hpo::integer_attr(trial, "bfhpo:item_chunk_size");
  facts.person_chunk_size = hpo::integer_attr(trial, "bfhpo:person_chunk_size");
  facts.gradient_checkpointing = hpo::boolean_attr(trial, "bfhpo:gradient_checkpointing").value_or(false);
  if (const json* history = hpo::system_attr(trial, "bfhpo:oom_history", hpo::AttrType::Array))
    for (const auto& rung : *history)
      if (rung.is_object())
        facts.oom_history.push_back({rung.contains("step") && rung["step"].is_number_integer() ? rung["step"].get<int>() : 0,
                                     string_in(rung, "config"), string_in(rung, "error")});
  if (const json* diagnostics = hpo::system_attr(trial, "bfhpo:diagnostics", hpo::AttrType::Object);
      diagnostics && has_named_parameters(*diagnostics))
    facts.diagnostics = *diagnostics;
  facts.posterior_items = hpo::string_attr(trial, "bfhpo:posterior_items").value_or("");
  return facts;
}

std::vector<TrialFacts> trial_facts(const std::vector<hpo::FrozenTrial>& trials, std::size_t objective) {
  std::vector<TrialFacts> out;
  out.reserve(trials.size());
  for (const auto& t : trials) out.push_back(trial_facts(t, objective));
  return out;
}

json dashboard_user_attrs(const TrialFacts& facts) {
  json attrs = json::object();
  if (!facts.reason.empty()) attrs["reason"] = facts.reason;
  if (facts.seconds) attrs["duration_s"] = fixed(facts.seconds, 1);
  if (facts.estimated_peak_mb) attrs["estimated_peak_mb"] = fixed(facts.estimated_peak_mb, 2);
  if (facts.measured_peak_mb) attrs["measured_peak_mb"] = fixed(facts.measured_peak_mb, 2);
  if (facts.budget_mb) attrs["budget_mb"] = fixed(facts.budget_mb, 2);
  if (!facts.gate.empty())
    attrs["memory_gate"] = facts.gate == "rechunked" ? "re-chunked to " + facts.gate_memory : facts.gate;
  if (facts.batch_size) {
    attrs["trained_batch_size"] = *facts.batch_size;
    attrs["trained_item_chunk_size"] = facts.item_chunk_size ? json(*facts.item_chunk_size) : json("none");
    if (facts.person_chunk_size) attrs["trained_person_chunk_size"] = *facts.person_chunk_size;
    attrs["gradient_checkpointing"] = facts.gradient_checkpointing;
  }
  if (facts.launched()) attrs["oom_retries"] = facts.oom_history.size();
  if (facts.diagnostics.is_object())
    for (const auto& p : facts.diagnostics.value("parameters", json::array()))
      for (const auto& [metric, value] : p.items())
        if (metric != "name")
          attrs[p.value("name", "?") + "." + metric] =
              value.is_number() ? rounded(value.get<double>(), 4) : json();
  return attrs;
}

}  // namespace bfhpo::report
