#include "report/trial_facts.hpp"

#include "hpo/study.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bfhpo::report {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& attrs, const char* key) {
  const auto it = attrs.find(key);
  if (it == attrs.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<int64_t> integer_at(const json& attrs, const char* key) {
  const auto it = attrs.find(key);
  if (it == attrs.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::string string_at(const json& attrs, const char* key) {
  const auto it = attrs.find(key);
  return it != attrs.end() && it->is_string() ? it->get<std::string>() : std::string();
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

}  // namespace

std::string memory_in_words(const json& memory) {
  const json chunk = memory.value("item_chunk_size", json());
  std::string text = chunk.is_number() ? "chunk " + chunk.dump() : std::string("chunk none");
  if (memory.value("gradient_checkpointing", false)) text += ", checkpointing";
  return text;
}

std::string TrialFacts::trained_config() const {
  if (!batch_size) return "";
  return "batch " + std::to_string(*batch_size) + ", " +
         memory_in_words({{"item_chunk_size", item_chunk_size ? json(*item_chunk_size) : json()},
                          {"gradient_checkpointing", gradient_checkpointing}});
}

TrialFacts trial_facts(const hpo::FrozenTrial& trial) {
  const json& attrs = trial.system_attrs;
  TrialFacts facts;
  facts.number = trial.number;
  facts.state = trial.state;
  facts.value = trial.value;
  facts.intermediate_values = trial.intermediate_values;
  facts.reason = string_at(attrs, hpo::kFailReasonAttr);
  facts.seconds = number_at(attrs, "bfhpo:seconds");
  facts.estimated_peak_mb = number_at(attrs, "bfhpo:estimated_peak_mb");
  facts.measured_peak_mb = number_at(attrs, "bfhpo:measured_peak_mb");
  facts.budget_mb = number_at(attrs, "bfhpo:budget_mb");
  if (attrs.contains("bfhpo:gate") && attrs["bfhpo:gate"].is_object()) {
    const json& gate = attrs["bfhpo:gate"];
    facts.gate = gate.value("decision", "");
    if (gate.contains("chosen")) facts.gate_memory = memory_in_words(gate["chosen"]);
  }
  facts.batch_size = integer_at(attrs, "bfhpo:batch_size");
  facts.item_chunk_size = integer_at(attrs, "bfhpo:item_chunk_size");
  facts.gradient_checkpointing = attrs.value("bfhpo:gradient_checkpointing", false);
  if (attrs.contains("bfhpo:oom_history") && attrs["bfhpo:oom_history"].is_array())
    for (const auto& rung : attrs["bfhpo:oom_history"])
      facts.oom_history.push_back({rung.value("step", 0), rung.value("config", ""), rung.value("error", "")});
  facts.diagnostics = attrs.value("bfhpo:diagnostics", json());
  facts.posterior_items = string_at(attrs, "bfhpo:posterior_items");
  return facts;
}

std::vector<TrialFacts> trial_facts(const std::vector<hpo::FrozenTrial>& trials) {
  std::vector<TrialFacts> out;
  out.reserve(trials.size());
  for (const auto& t : trials) out.push_back(trial_facts(t));
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
