// Reading the attributes bfhpo records on trials (bfhpo:*, Optuna's
// "fixed_params") back from a storage that other writers share: an Optuna
// script, a dashboard or another tool may have written one of those keys with
// another JSON type (bfhpo:requeued_from as a string). Every typed read goes
// through here: a value of the wrong type is treated as absent, with one
// warning on stderr per trial and key naming both, never an abort.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace bfhpo::hpo {

enum class AttrType { Boolean, Integer, Number, String, Object, Array };

// The trial's system attribute `key` when it holds `type` (Integer: a whole
// JSON number; Number: any number); nullptr when it is absent, null (bfhpo's
// "none"), or, warned once, of another type.
const nlohmann::json* system_attr(const FrozenTrial& trial, const std::string& key, AttrType type);

std::optional<bool> boolean_attr(const FrozenTrial& trial, const std::string& key);
std::optional<int64_t> integer_attr(const FrozenTrial& trial, const std::string& key);
std::optional<double> number_attr(const FrozenTrial& trial, const std::string& key);
std::optional<std::string> string_attr(const FrozenTrial& trial, const std::string& key);

}  // namespace bfhpo::hpo
