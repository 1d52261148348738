// The amortized posterior's spread, recalibrated per parameter: a scale s
// about each item's mean such that the flow's central intervals, scaled by
// s, cover what they state (spread_at_shape.hpp measures it on data sets
// simulated at the data's shape). A flow whose 80% intervals cover 85% of
// the truths has s below 1; one whose intervals cover 70% has s above 1.
//
// A scale within kSpreadResolution of 1 is left at 1: the 80% quantile of
// 1,280 simulated items' scales has an sd of about 3% of scale (a graded
// model at 500 x 10, bootstrapped by simulated set: 1.1-1.6% over 524 sets,
// so about twice that over 128; items of one set share their persons, so
// the binomial 1.1 points of coverage understate it), so a smaller
// correction would mostly move noise.
//
// PosteriorSpread maps each item's draws x to c + s (x - c) per parameter,
// c the item's mean of the flow's draws: its intervals then have the width
// the simulations call for, its means are the flow's. The mapped density is the
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
  // The scales themselves, one a parameter, those within kSpreadResolution of 1 set to 1; the flow's own
  // spread when every scale is 1 or one is not finite or not positive.
  static PosteriorSpread from_scales(std::vector<double> scales);

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
