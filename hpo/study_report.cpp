#include "hpo/study_report.hpp"

#include "common/csv_field.hpp"
#include "common/user_error.hpp"
#include "hpo/fixed_params.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "hpo/study.hpp"
#include "hpo/trial_attrs.hpp"

#include <cmath>
#include <set>
#include <sstream>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

json external_params(const FrozenTrial& trial) {
  json out = json::object();
  for (const auto& [name, internal] : trial.params) {
    auto d = trial.distributions.find(name);
    out[name] = d == trial.distributions.end() ? json(internal) : to_external(d->second, internal);
  }
  return out;
}

// What a trial runs with: its params, and for a WAITING trial that Optuna's
// enqueue_trial queued, the params it fixes (the worker samples the rest).
json shown_params(const FrozenTrial& trial) {
  json out = external_params(trial);
  if (trial.state != TrialState::Waiting) return out;
  if (const json* fixed = system_attr(trial, kFixedParamsAttr, AttrType::Object))
    for (const auto& [name, value] : fixed->items())
      if (!out.contains(name)) out[name] = value;
  return out;
}

// pandas' to_csv spelling of a value: inf, -inf; NaN as an empty cell.
std::string csv_value(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return json(value).dump();
}

// A JSON value as one CSV cell: a string as its text, anything else as JSON, null empty.
std::string csv_cell(const json& value) {
  if (value.is_null()) return "";
  return csv_field(value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

json value_json(std::optional<double> value) {
  if (!value) return nullptr;
  if (std::isnan(*value)) return "NaN";
  if (std::isinf(*value)) return *value > 0 ? "Infinity" : "-Infinity";
  return *value;
}

json study_status_json(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  json counts = json::object();
  for (TrialState s : {TrialState::Running, TrialState::Complete, TrialState::Pruned, TrialState::Fail, TrialState::Waiting})
    counts[to_string(s)] = 0;
  const int finished = count_finished(trials);
  json rows = json::array();
  for (const auto& t : trials) {
    counts[to_string(t.state)] = counts[to_string(t.state)].get<int>() + 1;
    rows.push_back({{"number", t.number},
                    {"state", to_string(t.state)},
                    {"value", value_json(t.value)},
                    {"params", shown_params(t)},
                    {"user_attrs", t.user_attrs},
                    {"system_attrs", t.system_attrs}});
  }
  std::optional<FrozenTrial> best = best_of(trials, spec.direction);
  json best_json = best ? json{{"number", best->number}, {"value", value_json(best->value)}, {"params", external_params(*best)}}
                        : json(nullptr);
  return {{"study", spec.name},    {"direction", to_string(spec.direction)},
          {"n_trials", spec.n_trials}, {"finished", finished},
          {"counts", counts},      {"best", best_json},
          {"trials", rows}};
}

json trial_summary_json(const StudySpec& spec, const FrozenTrial& trial) {
  return {{"study", spec.name},
          {"trial", trial.number},
          {"value", value_json(trial.value)},
          {"params", external_params(trial)},
          {"user_attrs", trial.user_attrs}};
}

json best_trial_json(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  std::optional<FrozenTrial> best = best_of(trials, spec.direction);
  if (!best)
    throw UserError::at(printable_storage(spec.storage.string()), "", "the study has no COMPLETE trial yet",
                        "finish at least one trial (bfhpo tell ... --value V) before exporting the best");
  return trial_summary_json(spec, *best);
}

std::string trials_csv(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  std::set<std::string> user_keys, system_keys;
  for (const auto& t : trials) {
    for (const auto& item : t.user_attrs.items()) user_keys.insert(item.key());
    for (const auto& item : t.system_attrs.items()) system_keys.insert(item.key());
  }
  std::ostringstream out;
  out << "number,state,value,datetime_start,datetime_complete";
  for (const auto& p : spec.search_space.params()) out << ",params_" << p.name;
  for (const auto& k : user_keys) out << "," << csv_cell("user_attrs_" + k);
  for (const auto& k : system_keys) out << "," << csv_cell("system_attrs_" + k);
  out << "\n";
  for (const auto& t : trials) {
    json params = external_params(t);
    out << t.number << "," << to_string(t.state) << "," << (t.value ? csv_value(*t.value) : "") << ","
        << csv_cell(t.datetime_start) << "," << csv_cell(t.datetime_complete);
    for (const auto& p : spec.search_space.params()) out << "," << csv_cell(params.value(p.name, json()));
    for (const auto& k : user_keys) out << "," << csv_cell(t.user_attrs.value(k, json()));
    for (const auto& k : system_keys) out << "," << csv_cell(t.system_attrs.value(k, json()));
    out << "\n";
  }
  return out.str();
}

}  // namespace bfhpo::hpo
