#include "inference/user_prior.hpp"

#include "common/config_reader.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

namespace bfhpo::inference {
namespace {

constexpr const char* kSyntax =
    "NAME=normal(MEAN, SD), c=beta(ALPHA, BETA), or a JSON file of priors as a study's simulator.priors";

std::string comma_joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

UserError bad_prior(const std::string& value, const std::string& why, const std::string& fix) {
  return UserError("bfhpo infer: --prior '" + value + "': " + why + ". Fix: " + fix);
}

// One NAME=family(X, Y) value into `priors`.
void apply_prior_text(const std::string& value, const models::SimulatorSpec& trained, models::ItemPriors& priors) {
  static const std::regex form(R"(\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z]+)\s*\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)\s*)");
  std::smatch match;
  if (!std::regex_match(value, match, form))
    throw bad_prior(value, "not a prior", std::string("write ") + kSyntax + ", e.g. log_a=normal(0, 0.5)");
  const std::string name = match[1], family = match[2];
  const auto names = models::prior_names(trained.model);
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw bad_prior(value, "the " + trained.model + " model has no prior '" + name + "'",
                    "name one of " + comma_joined(names) + " (did you mean '" + closest_name(name, names) + "'?)");
  const std::string expected = name == "c" ? "beta" : "normal";
  if (family != expected)
    throw bad_prior(value, "'" + name + "' takes a " + expected + " prior, not " + family,
                    "write " + name + "=" + expected + (expected == "beta" ? "(5, 17)" : "(0, 1)"));
  double first = 0.0, second = 0.0;
  try {
    size_t used_first = 0, used_second = 0;
    first = std::stod(match[3], &used_first);
    second = std::stod(match[4], &used_second);
    if (used_first != static_cast<size_t>(match[3].length()) || used_second != static_cast<size_t>(match[4].length()))
      throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw bad_prior(value, "its parameters are not numbers", "write e.g. " + name + "=" + expected + "(0, 1)");
  }
  if (!std::isfinite(first) || !std::isfinite(second) || (expected == "beta" && !(first > 0.0)) || !(second > 0.0))
    throw bad_prior(value,
                    expected == "beta" ? "a beta prior's parameters must be positive" : "the sd must be positive",
                    "write e.g. " + name + "=" + expected + (expected == "beta" ? "(5, 17)" : "(0, 0.5)"));
  if (name == "c")
    priors.c = {first, second};
  else if (name == "log_a")
    priors.log_a = {first, second};
  else if (name == "b")
    priors.b = {first, second};
  else
    priors.thresholds = {first, second};
}

std::string normal_text(const char* name, const models::NormalPrior& prior) {
  return std::string(name) + " ~ N(" + format_number(prior.mean, 4) + ", " + format_number(prior.sd, 4) + ")";
}

}  // namespace

models::ItemPriors user_priors(const std::vector<std::string>& values, const models::SimulatorSpec& trained) {
  models::ItemPriors priors = trained.priors;
  for (const auto& value : values) {
    if (value.find('=') != std::string::npos) {
      apply_prior_text(value, trained, priors);
      continue;
    }
    const auto file = read_config_file(value, "priors file");  // the section reads it in place
    ConfigSection section(file, value, "");
    models::read_item_priors(section, trained.model, priors);
  }
  return priors;
}

std::string prior_text(const models::SimulatorSpec& spec) {
  std::vector<std::string> parts;
  for (const auto& name : models::prior_names(spec.model)) {
    if (name == "log_a") parts.push_back(normal_text("log_a", spec.priors.log_a));
    if (name == "b") parts.push_back(normal_text("b", spec.priors.b));
    if (name == "thresholds") parts.push_back(normal_text("thresholds", spec.priors.thresholds));
    if (name == "c")
      parts.push_back("c ~ Beta(" + format_number(spec.priors.c.alpha, 4) + ", " + format_number(spec.priors.c.beta, 4) + ")");
  }
  return comma_joined(parts);
}

}  // namespace bfhpo::inference
