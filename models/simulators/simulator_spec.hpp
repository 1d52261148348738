// SimulatorSpec: one value that fully describes the IRT simulator a study
// trains on -- the model, its priors, the shapes and the missing-data rate.
// It is what study.json's "simulator" section reads into, what a trial's
// complete configuration writes back, and what make_item_response_model and
// Simulator are built from.
//
//   {"model": "grm", "n_categories": 4, "n_items": [15, 50], "n_persons": [150, 500],
//    "missing": 0.1 | [0, 0.3],
//    "priors": {"log_a": {"mean": 0, "sd": 0.5}, "b": {"mean": 0, "sd": 1},
//               "c": {"alpha": 5, "beta": 17}, "thresholds": {"mean": 0, "sd": 1}}}
//
// Models (inference target per item in brackets; theta_p ~ N(0, 1) always):
//   rasch  [b]                     P(y=1) = sigmoid(theta - b)
//   2pl    [log_a, b]              P(y=1) = sigmoid(a (theta - b))
//   3pl    [log_a, b, logit_c]     P(y=1) = c + (1 - c) sigmoid(a (theta - b))
//   grm    [log_a, b1..b{K-1}]     P(y>=k) = sigmoid(a (theta - b_k)), k = 1..K-1,
//                                  y in {0..K-1}, b_1 < ... < b_{K-1}
// Priors (defaults as in the IRT simulation literature): log a ~ N(0, 0.5),
// b ~ N(0, 1), c ~ Beta(5, 17) (mean 0.23: guessing on 4-5 options), the K-1
// graded thresholds are K-1 draws of N(0, 1) sorted. A model reads only the
// priors it uses; the others are an error naming the ones it reads.
// missing: each cell is missing completely at random with this rate, or with
// a rate drawn per dataset uniformly from [low, high]; rates in [0, 1).
#pragma once

#include "common/config_reader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bfhpo::models {

struct IrtRanges {
  int64_t min_items = 15;
  int64_t max_items = 50;
  int64_t min_persons = 150;
  int64_t max_persons = 500;
};

struct NormalPrior {
  double mean = 0.0;
  double sd = 1.0;
};

struct BetaPrior {
  double alpha = 5.0;
  double beta = 17.0;
};

struct ItemPriors {
  NormalPrior log_a{0.0, 0.5};
  NormalPrior b{0.0, 1.0};
  BetaPrior c{5.0, 17.0};
  NormalPrior thresholds{0.0, 1.0};
};

struct MissingRate {
  double low = 0.0;   // a rate drawn per dataset from [low, high]
  double high = 0.0;
  bool any() const { return high > 0.0; }
};

struct SimulatorSpec {
  std::string model = "2pl";
  int64_t n_categories = 2;  // response categories: 2, or K >= 2 for "grm"
  IrtRanges ranges;
  MissingRate missing;
  ItemPriors priors;

  nlohmann::json to_json() const;  // every field; simulator_spec_from_config reads it back unchanged
  nlohmann::json priors_json() const;  // to_json's "priors": the ones the model reads
};

// "rasch", "2pl", "3pl", "grm".
const std::vector<std::string>& model_names();

// The priors `model` reads: {"b"}, {"log_a", "b"}, {"log_a", "b", "c"}, {"log_a", "thresholds"}.
std::vector<std::string> prior_names(const std::string& model);

// A "priors" section ({"log_a": {"mean": 0, "sd": 0.5}, ...}) read over `out`: the ones `model` reads,
// every field checked, any other key an error naming the closest.
void read_item_priors(ConfigSection& priors, const std::string& model, ItemPriors& out);

// The components of spec's per-item inference target, in the network's order:
// {"b"}, {"log_a", "b"}, {"log_a", "b", "logit_c"}, {"log_a", "b1", .., "b{K-1}"}.
std::vector<std::string> item_parameter_names(const SimulatorSpec& spec);

// Reads study.json's "simulator" section. An unknown model names the valid
// ones and the closest; n_categories below 2 (or given to a binary model), a
// missing rate outside [0, 1), a prior with sd <= 0 or alpha/beta <= 0, and a
// prior the model does not read are UserErrors naming the file, the field and
// the fix.
SimulatorSpec simulator_spec_from_config(ConfigSection section);

}  // namespace bfhpo::models
