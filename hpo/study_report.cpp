#include "hpo/study_report.hpp"

#include "common/csv_field.hpp"
#include "common/user_error.hpp"
#include "hpo/fixed_params.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/storage/postgres_url.hpp"
#include "hpo/study.hpp"
#include "hpo/trial_attrs.hpp"

#include <algorithm>
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

// The names of the objectives' columns: "value", or "values_<metric>" for
// several (Optuna's trials_dataframe with metric names).
std::vector<std::string> value_columns(const StudySpec& spec) {
  if (!spec.multi_objective()) return {"value"};
  std::vector<std::string> columns;
  for (const ObjectiveSpec& objective : spec.objectives) columns.push_back("values_" + objective.metric);
  return columns;
}

// A trial's objective fields: {"value": v} for one objective, {"values": [...]} for several.
json objective_fields(const StudySpec& spec, const FrozenTrial& trial) {
  if (!spec.multi_objective()) return {{"value", value_json(trial.value())}};
  if (trial.values.empty()) return {{"values", nullptr}};
  json values = json::array();
  for (double v : trial.values) values.push_back(value_json(v));
  return {{"values", values}};
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
    json row = {{"number", t.number}, {"state", to_string(t.state)}};
    row.update(objective_fields(spec, t));
    row["params"] = shown_params(t);
    row["user_attrs"] = t.user_attrs;
    row["system_attrs"] = t.system_attrs;
    rows.push_back(row);
  }
  json status = {{"study", spec.name}, {"n_trials", spec.n_trials}, {"finished", finished}, {"counts", counts}};
  if (spec.multi_objective()) {
    json objectives = json::array();
    for (const ObjectiveSpec& objective : spec.objectives)
      objectives.push_back({{"metric", objective.metric}, {"direction", to_string(objective.direction)}});
    status["objectives"] = objectives;
    json front = json::array();
    for (const FrozenTrial& t : pareto_front(trials, spec.directions())) {
      json entry = {{"number", t.number}};
      entry.update(objective_fields(spec, t));
      entry["params"] = external_params(t);
      front.push_back(entry);
    }
    status["best_trials"] = front;
  } else {
    status["direction"] = to_string(spec.objectives.front().direction);
    std::optional<FrozenTrial> best = best_of(trials, spec.objectives.front().direction);
    status["best"] = best ? json{{"number", best->number}, {"value", value_json(best->value())},
                                 {"params", external_params(*best)}}
                          : json(nullptr);
  }
  status["trials"] = rows;
  return status;
}

json trial_summary_json(const StudySpec& spec, const FrozenTrial& trial) {
  json summary = {{"study", spec.name}, {"trial", trial.number}};
  summary.update(objective_fields(spec, trial));
  summary["params"] = external_params(trial);
  summary["user_attrs"] = trial.user_attrs;
  return summary;
}

UserError no_best_trial_error(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  const auto complete = static_cast<std::size_t>(std::count_if(trials.begin(), trials.end(), [](const FrozenTrial& t) {
    return t.state == TrialState::Complete && !t.values.empty() &&
           std::none_of(t.values.begin(), t.values.end(), [](double v) { return std::isnan(v); });
  }));
  const std::string storage = printable_storage(spec.storage.string());
  if (complete == 0)
    return UserError::at(storage, "", "the study has no COMPLETE trial yet",
                         spec.has_simulator() ? "run `bfhpo optimize " + spec.source.string() + "` until a trial completes"
                                              : "finish at least one trial (bfhpo tell ... --value V) first");
  std::string stated;
  for (const ConstraintSpec& constraint : spec.constraints) stated += (stated.empty() ? " (" : ", ") + constraint.text();
  return UserError::at(storage, "",
                       (complete == 1 ? std::string("the study's one COMPLETE trial misses its constraints")
                                      : "none of the study's " + std::to_string(complete) +
                                            " COMPLETE trials meets its constraints") +
                           (stated.empty() ? "" : stated + ")") + ", so none is feasible",
                       "run more trials, or relax the constraints");
}

json best_trial_json(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  if (spec.multi_objective())
    throw UserError::at(spec.source.string(), "objectives",
                        "a study of " + std::to_string(spec.objectives.size()) +
                            " objectives has no one best trial but a front of them",
                        "see the front with `bfhpo status` (`bfhpo status --json`: \"best_trials\"), or export "
                        "every trial with `bfhpo export --format csv`");
  std::optional<FrozenTrial> best = best_of(trials, spec.objectives.front().direction);
  if (!best) throw no_best_trial_error(spec, trials);
  return trial_summary_json(spec, *best);
}

std::string trials_csv(const StudySpec& spec, const std::vector<FrozenTrial>& trials) {
  std::set<std::string> user_keys, system_keys;
  for (const auto& t : trials) {
    for (const auto& item : t.user_attrs.items()) user_keys.insert(item.key());
    for (const auto& item : t.system_attrs.items()) system_keys.insert(item.key());
  }
  std::ostringstream out;
  out << "number,state";
  for (const std::string& column : value_columns(spec)) out << "," << csv_cell(column);
  out << ",datetime_start,datetime_complete";
  for (const auto& p : spec.search_space.params()) out << ",params_" << p.name;
  for (const auto& k : user_keys) out << "," << csv_cell("user_attrs_" + k);
  for (const auto& k : system_keys) out << "," << csv_cell("system_attrs_" + k);
  out << "\n";
  for (const auto& t : trials) {
    json params = external_params(t);
    out << t.number << "," << to_string(t.state);
    for (std::size_t i = 0; i < spec.objectives.size(); ++i)
      out << "," << (i < t.values.size() ? csv_value(t.values[i]) : "");
    out << "," << csv_cell(t.datetime_start) << "," << csv_cell(t.datetime_complete);
    for (const auto& p : spec.search_space.params()) out << "," << csv_cell(params.value(p.name, json()));
    for (const auto& k : user_keys) out << "," << csv_cell(t.user_attrs.value(k, json()));
    for (const auto& k : system_keys) out << "," << csv_cell(t.system_attrs.value(k, json()));
    out << "\n";
  }
  return out.str();
}

}  // namespace bfhpo::hpo
