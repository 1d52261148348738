// The amortized Bayesian workflow on one data set, as `bfhpo infer` runs it:
// the amortized draws (posterior_inference.hpp), the exact-posterior step
// when asked (posterior_refinement.hpp: importance or chains, the chains'
// draws given the amortized log q they lack), then the model check
// (posterior_predictive_check.hpp and summary_space_check.hpp) on the draws
// that stand, and every person's score when asked (person_scores.hpp).
//
// The path a data set takes (Li, Vehtari, Buerkner, Radev, Acerbi & Schmitt
// 2024's amortized Bayesian workflow): the summary-space check runs first;
// with --refine auto a data set whose summary lies outside what the network
// trained on goes to chains whatever k-hat says (its amortized draws are no
// proposal to trust); otherwise importance sampling, and chains where k-hat
// is too high. With --refine importance such a data set keeps its draws and
// is marked as needing chains. Every line a person should read (warnings, the refinement's
// line, the model check's) goes to `say` as it becomes known, in that order;
// the caller prints it. Same data, model and options: the same result.
#pragma once

#include "inference/person_scores.hpp"
#include "inference/posterior_inference.hpp"
#include "inference/posterior_predictive_check.hpp"
#include "inference/posterior_refinement.hpp"
#include "inference/spread_at_shape.hpp"
#include "inference/summary_space_check.hpp"
#include "models/simulators/simulator_spec.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace bfhpo::inference {

struct InferenceOptions {
  int64_t draws = 1000;
  uint64_t seed = 0;
  std::optional<RefinementOptions> refinement;  // none: the amortized draws stand
  std::optional<PredictiveCheckOptions> check;  // none: no model check
  std::optional<PersonScoreOptions> persons;    // none: no person scores
  std::optional<models::ItemPriors> prior;      // the reported posterior's (user_prior.hpp); none: the training one
  // The data set's index in its run (infer_many). Its draws, the importance step's resampling, the model
  // check's replications and its plausible values come from each seed + data_set: one data set's Monte Carlo
  // error is independent of another's (under one seed every data set's draws would share the flow's base
  // normals, and a simulation study's coverage would carry their error: a graded b1's 80% intervals with
  // 200 draws covered 82.2% of the truths under one seed and 80.0% under another, on the same 524 data
  // sets). The summary-space check's simulations, a reference the run shares, keep the check's seed.
  uint64_t data_set = 0;
};

struct DataSetInference {
  PosteriorDraws posterior;                       // the draws that stand
  std::optional<nlohmann::json> refinement;       // Refinement::to_json, when one ran
  std::optional<PredictiveCheck> predictive;      // when the model check ran
  std::optional<SummarySpaceCheck> summary_space;
  std::optional<PersonScores> persons;
  double pareto_k = std::numeric_limits<double>::quiet_NaN();  // NaN: not computed
  // {"amortized": the training prior, "posterior": the prior the draws that stand have}, as priors_json.
  nlohmann::json prior;
  double item_coverage_loss = std::numeric_limits<double>::quiet_NaN();  // ItemJudgement's; NaN: not judged

  // How the draws that stand were made: amortized, importance or mcmc.
  std::string path() const;
  // Amortized draws that a diagnostic distrusts (the joint k-hat and some item's too high, or the summary
  // outside the trained space)
  // and that no chain has replaced.
  bool needs_chains() const;

  // PosteriorDraws::summary_json with "prior", and "refinement" and "model_check" ({"items", "summary_space"})
  // when they ran.
  nlohmann::json summary_json() const;
};

using SayLine = std::function<void(const std::string& line)>;

// `references` and `spreads`: the summary-space check's simulated side and the spread calibrations, shared
// by the data sets of one run (none: this call's own).
DataSetInference infer_data_set(TrainedModel& model, const ResponseMatrix& data, const InferenceOptions& options,
                                const SayLine& say, SummarySpaceReferences* references = nullptr,
                                ShapeSpreads* spreads = nullptr);

// One line: how many items misfit against how many chance gives, where the data's summary lies.
std::string model_check_line(const PredictiveCheck& predictive, const SummarySpaceCheck& summary_space);

}  // namespace bfhpo::inference
