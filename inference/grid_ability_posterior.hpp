// Each person's ability posterior on the ability grid (ability_grid.hpp)
// given sets of item parameters: the N(0, 1) prior the simulator draws
// abilities from, times the likelihood of the person's answered cells, over
// the grid's points with the trapezoid rule's weights (MarginalLikelihood's
// integral), normalized over the grid. The person scores' mixture and the
// model check's ability draws read it; the importance step reads its
// integral, the marginal likelihood.
//
// In float32: every item and category and the grid's weights in one
// product, [P, J K + 1] x [S, J K + 1, G], then a softmax along the grid.
// A log likelihood of J answers carries a rounding error of about J x 6e-8
// of its size, a few 1e-6 of a mass at 40 items (against the Monte Carlo
// error of 200 item draws, ~1e-2 of a posterior sd, it is nothing), at half
// the float64 table's memory traffic and twice its vector width.
#pragma once

#include "inference/response_matrix.hpp"
#include "models/simulators/item_response_model.hpp"

#include <torch/torch.h>

namespace bfhpo::inference {

class GridAbilityPosterior {
 public:
  GridAbilityPosterior(const models::ItemResponseModel& model, const ResponseMatrix& data);

  // params [S, J, D] -> [S, P, G] float32, each row summing to 1 over the grid.
  torch::Tensor operator()(const torch::Tensor& params) const;
  // log p(y | params) [S] float64, MarginalLikelihood::log_likelihood's integral from the same float32
  // table: each person's log integral off by a few 1e-7 of its size, their sum over the persons in
  // float64. For importance weights, whose log q comes from a float32 flow with errors of that order;
  // in chunks of sets whose tables hold at most kGridTableElements, on the workers.
  torch::Tensor log_marginal_likelihood(const torch::Tensor& params) const;

  int64_t persons() const { return answered_one_hot_.size(0); }
  // The grid's abilities [G], float64.
  const torch::Tensor& grid() const { return grid_; }

 private:
  // log prior weight + log likelihood of every person at every grid point: [S, P, G] float32.
  torch::Tensor log_joint(const torch::Tensor& params) const;

  const models::ItemResponseModel& model_;
  torch::Tensor answered_one_hot_;  // [P, J K + 1] float32: 1 at the observed category, and a last column of 1s
  torch::Tensor grid_;              // [G] float64
  torch::Tensor log_grid_weight_;   // [G] float32: log of the trapezoid weight times the N(0, 1) density
};

}  // namespace bfhpo::inference
