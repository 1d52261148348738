#include "hpo/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bfhpo::hpo {
namespace {

using nlohmann::json;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Optuna compares categorical choices by equality, treating NaN == NaN.
bool same_choice(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    double x = a.get<double>(), y = b.get<double>();
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  return a == b;
}

bool on_grid(double value, double low, double step) {
  double k = (value - low) / step;
  return std::abs(k - std::round(k)) <= 1e-8 * std::max(1.0, std::abs(k));
}

}  // namespace

std::string distribution_to_optuna_json(const Distribution& distribution) {
  json out = std::visit(
      Overloaded{
          [](const FloatDistribution& d) {
            return json{{"name", "FloatDistribution"},
                        {"attributes",
                         {{"step", d.step ? json(*d.step) : json(nullptr)},
                          {"low", d.low},
                          {"high", d.high},
                          {"log", d.log}}}};
          },
          [](const IntDistribution& d) {
            return json{{"name", "IntDistribution"},
                        {"attributes", {{"log", d.log}, {"step", d.step}, {"low", d.low}, {"high", d.high}}}};
          },
          [](const CategoricalDistribution& d) {
            return json{{"name", "CategoricalDistribution"}, {"attributes", {{"choices", d.choices}}}};
          }},
      distribution);
  return out.dump();
}

Distribution distribution_from_optuna_json(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("name") ||
      !parsed.contains("attributes") || !parsed["attributes"].is_object())
    throw std::invalid_argument("not an Optuna distribution: " + text);
  const std::string name = parsed["name"].get<std::string>();
  const json& a = parsed["attributes"];
  try {
    // Optuna's deprecated classes are FloatDistribution / IntDistribution in disguise.
    if (name == "FloatDistribution" || name == "UniformDistribution" ||
        name == "LogUniformDistribution" || name == "DiscreteUniformDistribution") {
      FloatDistribution d;
      d.low = a.at("low").get<double>();
      d.high = a.at("high").get<double>();
      d.log = name == "LogUniformDistribution" || a.value("log", false);
      if (name == "DiscreteUniformDistribution") d.step = a.at("q").get<double>();
      else if (a.contains("step") && !a["step"].is_null()) d.step = a["step"].get<double>();
      return d;
    }
    if (name == "IntDistribution" || name == "IntUniformDistribution" || name == "IntLogUniformDistribution") {
      IntDistribution d;
      d.low = a.at("low").get<long long>();
      d.high = a.at("high").get<long long>();
      d.log = name == "IntLogUniformDistribution" || a.value("log", false);
      d.step = a.value("step", 1LL);
      return d;
    }
    if (name == "CategoricalDistribution") {
      CategoricalDistribution d;
      for (const json& choice : a.at("choices")) d.choices.push_back(choice);
      return d;
    }
  } catch (const json::exception& e) {
    throw std::invalid_argument("malformed Optuna distribution " + text + ": " + e.what());
  }
  throw std::invalid_argument("unknown Optuna distribution class: " + name);
}

json to_external(const Distribution& distribution, double internal) {
  return std::visit(
      Overloaded{[&](const FloatDistribution&) { return json(internal); },
                 [&](const IntDistribution&) { return json(static_cast<long long>(std::llround(internal))); },
                 [&](const CategoricalDistribution& d) {
                   auto index = static_cast<std::size_t>(std::llround(internal));
                   if (internal < 0 || index >= d.choices.size())
                     throw std::invalid_argument("categorical index out of range");
                   return d.choices[index];
                 }},
      distribution);
}

double to_internal(const Distribution& distribution, const json& external) {
  return std::visit(
      Overloaded{[&](const FloatDistribution&) {
                   if (!external.is_number()) throw std::invalid_argument("expected a number, got " + external.dump());
                   return external.get<double>();
                 },
                 [&](const IntDistribution&) {
                   if (!external.is_number()) throw std::invalid_argument("expected an integer, got " + external.dump());
                   double v = external.get<double>();
                   if (v != std::round(v)) throw std::invalid_argument("expected an integer, got " + external.dump());
                   return v;
                 },
                 [&](const CategoricalDistribution& d) {
                   for (std::size_t i = 0; i < d.choices.size(); ++i)
                     if (same_choice(d.choices[i], external)) return static_cast<double>(i);
                   throw std::invalid_argument(external.dump() + " is not one of the choices " +
                                               json(d.choices).dump());
                 }},
      distribution);
}

double value_at_quantile(const Distribution& distribution, double u) {
  u = std::clamp(u, 0.0, 1.0);
  // The k-th of n equal shares of [0, 1) holds u.
  const auto share = [u](long long n) { return std::min(n - 1, static_cast<long long>(u * static_cast<double>(n))); };
  return std::visit(
      Overloaded{
          [&](const FloatDistribution& d) {
            if (d.step) {
              const auto cells = static_cast<long long>(std::floor((d.high - d.low) / *d.step + 1e-9)) + 1;
              return std::min(d.high, d.low + *d.step * static_cast<double>(share(cells)));
            }
            if (d.log) return std::exp(std::log(d.low) + u * (std::log(d.high) - std::log(d.low)));
            return std::min(d.high, d.low + u * (d.high - d.low));
          },
          [&](const IntDistribution& d) {
            if (d.log) {
              const double low = std::log(d.low - 0.5), high = std::log(d.high + 0.5);
              return static_cast<double>(std::clamp(std::llround(std::exp(low + u * (high - low))), d.low, d.high));
            }
            return static_cast<double>(d.low + d.step * share((d.high - d.low) / d.step + 1));
          },
          [&](const CategoricalDistribution& d) {
            return static_cast<double>(share(static_cast<long long>(d.choices.size())));
          }},
      distribution);
}

bool contains(const Distribution& distribution, double internal) {
  if (!std::isfinite(internal)) return false;
  return std::visit(
      Overloaded{[&](const FloatDistribution& d) {
                   if (internal < d.low || internal > d.high) return false;
                   return !d.step || on_grid(internal, d.low, *d.step);
                 },
                 [&](const IntDistribution& d) {
                   if (internal != std::round(internal)) return false;
                   auto v = static_cast<long long>(internal);
                   return v >= d.low && v <= d.high && (v - d.low) % d.step == 0;
                 },
                 [&](const CategoricalDistribution& d) {
                   return internal >= 0 && internal == std::round(internal) &&
                          internal < static_cast<double>(d.choices.size());
                 }},
      distribution);
}

bool is_single(const Distribution& distribution) {
  return std::visit(Overloaded{[](const FloatDistribution& d) {
                                 if (d.low == d.high) return true;
                                 return d.step && d.high - d.low < *d.step;
                               },
                               [](const IntDistribution& d) { return d.high - d.low < d.step; },
                               [](const CategoricalDistribution& d) { return d.choices.size() == 1; }},
                    distribution);
}

bool operator==(const Distribution& a, const Distribution& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      Overloaded{[&](const FloatDistribution& x) {
                   const auto& y = std::get<FloatDistribution>(b);
                   return x.low == y.low && x.high == y.high && x.log == y.log && x.step == y.step;
                 },
                 [&](const IntDistribution& x) {
                   const auto& y = std::get<IntDistribution>(b);
                   return x.low == y.low && x.high == y.high && x.log == y.log && x.step == y.step;
                 },
                 [&](const CategoricalDistribution& x) {
                   const auto& y = std::get<CategoricalDistribution>(b);
                   if (x.choices.size() != y.choices.size()) return false;
                   for (std::size_t i = 0; i < x.choices.size(); ++i)
                     if (!same_choice(x.choices[i], y.choices[i])) return false;
                   return true;
                 }},
      a);
}

std::optional<std::string> incompatibility(const Distribution& recorded, const Distribution& now) {
  static const char* kinds[] = {"float", "int", "categorical"};
  if (recorded.index() != now.index())
    return std::string("recorded as ") + kinds[recorded.index()] + ", now " + kinds[now.index()];
  const auto log_of = [](const Distribution& d) {
    if (const auto* f = std::get_if<FloatDistribution>(&d)) return f->log;
    if (const auto* i = std::get_if<IntDistribution>(&d)) return i->log;
    return false;
  };
  if (log_of(recorded) != log_of(now))
    return std::string("recorded ") + (log_of(recorded) ? "with" : "without") + " log scale, now " +
           (log_of(now) ? "with" : "without");
  const auto* before = std::get_if<CategoricalDistribution>(&recorded);
  if (before && !(recorded == now))
    return "recorded with choices " + json(before->choices).dump() + ", now " +
           json(std::get<CategoricalDistribution>(now).choices).dump();
  return std::nullopt;
}

}  // namespace bfhpo::hpo
