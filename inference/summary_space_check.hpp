// Is the data set one of those the network was trained on? The check of
// Schmitt et al. (2023), "Detecting model misspecification in amortized
// Bayesian inference with neural networks" (BayesFlow's summary-space MMD):
// a data set far from the training distribution in the summary network's
// output space gets a posterior the network never learned, which may be
// confidently wrong.
//
// The summary network's global summary s(y) [summary_dim] of the data is
// compared with those of kReferenceSets data sets simulated from the trained
// model's prior at the data's shape (persons x items) and share of missing
// cells (missing completely at random, as in training): the statistic is
// the squared maximum mean discrepancy MMD^2({s(y)}, reference) with a sum of
// Gaussian kernels at 1/4, 1/2, 1, 2 and 4 times the median distance between
// reference summaries (the median heuristic, made multi-scale as BayesFlow's
// kernel sum is). Its null distribution comes from kHeldOutSets further
// simulated data sets, each compared with the same reference as the data
// is: the p-value is (1 + #{held-out MMD^2 >= the data's}) / (kHeldOutSets + 1),
// and the percentile the share of held-out distances below the data's.
// A p-value below 0.01 says the data lie outside what the network was
// trained on (the smallest p-value is 1 / (kHeldOutSets + 1) < 0.005).
//
// Data with no observed cell cannot be simulated (a missing rate of 1): the
// check is then skipped, its numbers NaN and `skipped` saying why.
//
// Simulated one data set at a time, each from its own seed, and summarized
// in batches of at most 65,536 cells (one set when a set is larger): the
// memory is that of the summary network on one such batch, or on one set
// of the data's shape, as infer's.
// Deterministic: the same model, data and seed give the same result. The
// simulated side depends on the data only through its shape and missing
// share, so data sets of one shape share it (SummarySpaceReferences: many
// data sets of 500 x 20 simulate their 400 sets once, not once each).
#pragma once

#include "inference/posterior_inference.hpp"
#include "inference/response_matrix.hpp"
#include "inference/shape_cache.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::inference {

inline constexpr int64_t kReferenceSets = 200;
inline constexpr int64_t kHeldOutSets = 200;
inline constexpr double kSummaryOutsideLevel = 0.01;

struct SummarySpaceCheck {
  double mmd2 = 0.0;           // the data's MMD^2 to the reference summaries
  double held_out_median = 0.0;  // the median of the held-out sets' MMD^2
  double percentile = 0.0;     // 0..100: the share of held-out MMD^2 below the data's
  double p_value = 1.0;
  int64_t reference_sets = 0, held_out_sets = 0;
  double missing_share = 0.0;  // the rate the simulated sets were given
  std::string skipped;         // why the check could not run (its numbers NaN); empty when it ran

  bool outside() const { return p_value < kSummaryOutsideLevel; }
  // {"mmd2", "held_out_median_mmd2", "percentile", "p_value", "reference_sets", "held_out_sets", "missing_share",
  //  "outside"} (NaN as null), and "skipped" when it is not empty.
  nlohmann::json to_json() const;
  // When outside(): what it means for the posterior; when skipped: why; none otherwise.
  std::optional<std::string> warning() const;
};

// The squared MMD of one point x [S] to the rows of `reference` [M, S] with
// the multi-scale kernel above at base bandwidth `bandwidth` (biased form: it
// keeps k(x, x) and the reference's diagonal).
double mmd2_to_reference(const torch::Tensor& x, const torch::Tensor& reference, double bandwidth);

// The simulated side of the check at one shape, missing share and seed.
struct SummarySpaceReference {
  torch::Tensor reference;        // [kReferenceSets, S] float64 summaries
  double bandwidth = 1.0;         // the median distance between them
  std::vector<double> null_mmd2;  // each held-out set's MMD^2 to the reference, sorted
};

// The references of one model, computed once a (persons, items, missing share, seed).
using SummarySpaceReferences = ShapeCache<SummarySpaceReference>;

// `references`: where to keep and find the simulated side (none: computed for this call only). `observed`:
// the data's summary when the caller has it (PosteriorDraws::summary; undefined: computed here).
SummarySpaceCheck summary_space_check(TrainedModel& model, const ResponseMatrix& data, uint64_t seed,
                                      SummarySpaceReferences* references = nullptr,
                                      const torch::Tensor& observed = {});

}  // namespace bfhpo::inference
