// Each person's ability posterior on the ability grid (ability_grid.hpp)
// given sets of item parameters: the N(0, 1) prior the simulator draws
// abilities from, times the likelihood of the person's answered cells, over
// the grid's points with the trapezoid rule's weights (MarginalLikelihood's
// integral), normalized over the grid. The person scores' mixture and the
// model check's ability draws read it; the importance step reads its
// integral, the marginal likelihood. DrawAbilityTable holds it for every
// posterior draw of a data set at once, for those three stages together.
//
// In float32: the log probabilities of every item's categories on the grid
// once a set of item parameters, [J, K, G], then a person's row at a time
// the sum of its answered cells' rows and exp(log joint - log integral)
// along the grid, in the cache (grid_row_kernel.hpp).
// A log likelihood of J answers carries a rounding error of about J x 6e-8
// of its size, a few 1e-6 of a mass at 40 items (against the Monte Carlo
// error of 200 item draws, ~1e-2 of a posterior sd, it is nothing), at half
// the float64 table's memory traffic and twice its vector width.
#pragma once

#include "inference/response_matrix.hpp"
#include "models/simulators/item_response_model.hpp"

#include <torch/torch.h>

#include <utility>
#include <vector>

namespace bfhpo::inference {

// The sets [0, sets) in chunks {start, count} whose [count, persons, G]
// float32 tables hold at most kGridTableElements, for the workers: the
// chunks depend only on `sets` and `persons`, so what is added up in chunk
// order is the same on any number of cores.
std::vector<std::pair<int64_t, int64_t>> grid_chunks(int64_t sets, int64_t persons);

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

  int64_t persons() const { return persons_; }
  // The grid's abilities [G], float64.
  const torch::Tensor& grid() const { return grid_; }

 private:
  friend class DrawAbilityTable;
  // log p(y = k | theta_g, params) [S, J, K, G] float32, contiguous.
  torch::Tensor log_probabilities(const torch::Tensor& params) const;
  // The posteriors of params [S, J, D] into `posterior` [S, P, G] (none: left out) and the log integrals
  // into `log_integral` [S, P], both contiguous float32.
  void posteriors_into(const torch::Tensor& params, float* posterior, float* log_integral) const;

  const models::ItemResponseModel& model_;
  int64_t persons_ = 0;
  // Person p's answered cells are answered_rows_[person_start_[p] .. person_start_[p + 1]): each the offset
  // of its category's grid row in a set's [J, K, G] log probabilities.
  std::vector<int64_t> person_start_, answered_rows_;
  torch::Tensor grid_;              // [G] float64
  torch::Tensor log_grid_weight_;   // [G padded] float32: log of the trapezoid weight times the N(0, 1) density
};

// Every posterior draw's grid posteriors at once, for the stages of one data
// set that read the same draws (the importance step, the model check, the
// person scores), where each would otherwise compute its own: one table
// instead of three. Held only when it fits within kSharedAbilityTableElements
// (128 MB: 200 draws of up to 1,386 persons); otherwise each stage computes
// its draws' posteriors in chunks. The same bits either way: a draw's row
// does not depend on the draws beside it.
inline constexpr int64_t kSharedAbilityTableElements = int64_t{1} << 25;

class DrawAbilityTable {
 public:
  static bool fits(int64_t draws, int64_t persons);
  // draws [J, S, D] (PosteriorDraws::draws), on the workers.
  DrawAbilityTable(const GridAbilityPosterior& abilities, const torch::Tensor& draws);

  int64_t draws() const { return rows_.size(0); }
  // log p(y | draw s) [S] float64 of the current draws: GridAbilityPosterior::log_marginal_likelihood's.
  torch::Tensor log_marginal_likelihood() const;
  // The grid posteriors [n, P, G] float32 of the current draws `indices` [n] (a copy, the caller's to change).
  torch::Tensor posteriors(const torch::Tensor& indices) const;
  // The grid posteriors [P, G] of current draw `draw`, in place (valid while the table lives and is not selected).
  const float* draw_rows(int64_t draw) const;
  // The current draws become rows `rows` [n] of the table's (importance resampling: draw i is the old draw rows[i]).
  void select(const torch::Tensor& rows);

 private:
  torch::Tensor posterior_;     // [S, P, G] float32
  torch::Tensor log_integral_;  // [S, P] float32
  torch::Tensor rows_;          // [n] int64: the table row of each current draw
  int64_t persons_ = 0;
};

}  // namespace bfhpo::inference
