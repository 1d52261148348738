// The amortized posterior's spread, recalibrated per parameter from the
// estimator's own validation.
//
// After training, the estimator is validated on data sets simulated from its
// prior (trials/evaluation.hpp): per parameter, z = (posterior mean - truth)
// / posterior sd over every item of every data set. A calibrated posterior
// has z sd 1; a flow whose z sd is s for a parameter has intervals 1/s times
// as wide as they should be, on average over the prior (grm-k5's log a: z sd
// 0.91, so its 80% intervals covered 83%). The validation's z is computed from
// n draws, which inflates its variance by (1 + 1/n)(n - 1)/(n - 3) (the
// estimated mean's error and 1/sd estimated from n draws), so the factor is
// s = z sd / sqrt((1 + 1/n)(n - 1)/(n - 3)).
//
// The z sd is an average over the estimator's trained shapes, and a
// shape's own can differ by a few %: at 500 persons x 10 items grm-k5's log a
// covered as a scale of 0.94 would, against the validation's 0.90, and 2pl's
// b as 1.00 at 500 x 20 against 1.03 (bench/README.md). So a scale within
// kSpreadResolution of 1 is left at 1: what the validation cannot tell from
// calibrated at a given shape is not corrected.
//
// PosteriorSpread maps each item's draws x to c + s (x - c) per parameter,
// c the item's mean of the flow's draws: its intervals then have the
// validation's width, its means are the flow's. The mapped density is the
// flow's at the preimage c + (x - c) / s, times 1 / prod s (log_q minus
// sum log s), so importance weights and chains see the density the draws
// came from. The scale only moves the spread, not the z mean (a bias stays).
// Thresholds of a graded item stay in order under a scale <= 1; a scale above
// 1 may put a draw out of order, which infer's support check draws again.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bfhpo::inference {

inline constexpr double kSpreadResolution = 0.05;

class PosteriorSpread {
 public:
  // The flow's own spread: every scale 1.
  PosteriorSpread() = default;
  // The scales from validation diagnostics ({"n_draws", "parameters": [{"name",
  // "z_std"}, ...]}, models/diagnostics.hpp), one per `parameter_names` in that
  // order, those within kSpreadResolution of 1 set to 1; the flow's own spread
  // when every scale is 1, or when a parameter or its z sd is missing, not
  // finite or not positive, or n_draws is under 4 (a model trained before
  // validation wrote z sd, or a broken validation).
  static PosteriorSpread from_diagnostics(const nlohmann::json& diagnostics,
                                          const std::vector<std::string>& parameter_names);

  bool is_identity() const { return scales_.empty(); }
  // Per parameter, in the model's order (empty for the flow's own spread).
  const std::vector<double>& scales() const { return scales_; }
  // {"log_a": s, "b": s, ...}, or null for the flow's own spread.
  nlohmann::json to_json(const std::vector<std::string>& parameter_names) const;

  // draws [J, n, D] float32, center [J, D]: c + s (draws - c).
  torch::Tensor apply(const torch::Tensor& draws, const torch::Tensor& center) const;
  // The preimage: c + (draws - c) / s.
  torch::Tensor invert(const torch::Tensor& draws, const torch::Tensor& center) const;
  // sum_d log s_d: subtracted from the flow's log q at the preimage.
  double log_scale_sum() const;

 private:
  explicit PosteriorSpread(std::vector<double> scales) : scales_(std::move(scales)) {}
  torch::Tensor scale_tensor(const torch::Tensor& like) const;
  std::vector<double> scales_;
};

}  // namespace bfhpo::inference
