// The likelihood of item parameters with every person's ability integrated
// out (Bock & Aitkin 1981's marginal likelihood), the density an exact
// sampler of the items' posterior needs:
//   log p(y | params) = sum_p log integral prod_j p(y_pj | theta, params_j) N(theta; 0, 1) dtheta,
// abilities N(0, 1) as the simulator draws them, missing cells left out of
// the product. The integral is the trapezoid rule on kAbilityGridPoints
// abilities over [-6, 6] (step 0.1): for an integrand as smooth as a
// Gaussian of sd s its error is about exp(-2 pi^2 s^2 / 0.01), below 1e-40
// for s >= 0.3 (a person's ability posterior on fewer than ~100 items of
// a <= 3), and the N(0, 1) mass beyond +-6 is 2e-9.
//
// A sampler that changes one item at a time keeps a PersonGridTable per
// chain: prod_j p(y_pj | theta_g, params_j) for every person and grid point,
// scaled per person so that it neither underflows nor needs a logarithm;
// one item's change multiplies a person's row by that item's likelihood
// ratio at the person's answer, and the marginal likelihood is a weighted sum
// over the grid a person: a proposal is scored by one pass over the rows of
// the persons who answered the item (moved_log_likelihood) and the table
// changes only when it is accepted (move). Everything in float64 on the CPU.
#pragma once

#include "inference/ability_grid.hpp"
#include "inference/response_matrix.hpp"
#include "models/simulators/item_response_model.hpp"

#include <cstdint>
#include <vector>

namespace bfhpo::inference {

// Doubles one chunk's [S, P, G] table holds at most (8 MB: a chunk's J passes over it stay in the
// cache; at 64 MB importance sampling of 1,000 draws on 4,000 persons took 4x as long).
inline constexpr int64_t kGridTableElements = int64_t{1} << 20;
// An item's draw whose category probability is this many times the table's at a node (a likelihood ratio
// of 1e30 on one person's one answer) counts as this many: the float32 sums of changed_item_log_likelihood
// stay finite.
inline constexpr double kLargestChangedRatio = 1e30;

class MarginalLikelihood {
 public:
  MarginalLikelihood(const models::ItemResponseModel& model, const ResponseMatrix& data);

  int64_t persons() const { return answered_one_hot_.size(0); }
  int64_t items() const { return answered_one_hot_.size(1); }
  int64_t grid_points() const { return log_grid_weight_.size(0); }

  // log p(y | params) for params [S, J, D]: [S], in chunks of sets whose tables hold at most 8 MB. The
  // float64 answer; the importance step reads GridAbilityPosterior's float32 one, tested against this.
  torch::Tensor log_likelihood(const torch::Tensor& params) const;
  // The same with autograd through params (one table of every set at once): for an optimiser of a few sets.
  torch::Tensor differentiable_log_likelihood(const torch::Tensor& params) const;

  struct PersonGridTable {
    torch::Tensor scaled;     // [S, P, G]: prod_j p(y_pj | theta_g, params_j) / exp(log_scale_p)
    torch::Tensor log_scale;  // [S, P]: each person's largest log prod over the grid when computed
    torch::Tensor marginal;   // [S, P]: sum_g w_g scaled[s, p, g], each person's integral / exp(log_scale_p)
  };
  // The table of params [S, J, D], computed from scratch.
  PersonGridTable table(const torch::Tensor& params) const;
  // log p(y | params) of the params a table holds: [S].
  static torch::Tensor log_likelihood(const PersonGridTable& table);

  // A table of one set, in which item `item` has params `from` [D]: log p(y | params) with the item at each
  // of `to` [S, D] instead, [S] (an item's draws judged alone), reading the table once: a [P_k, G] x
  // [G, S] product in float32 for the P_k persons who answered category k, each k, so each person's log
  // integral is within G 2^-24 of the double one (a ratio of category probabilities above
  // kLargestChangedRatio counts as that). The table is left as it is.
  torch::Tensor changed_item_log_likelihood(const PersonGridTable& table, int64_t item, const torch::Tensor& from,
                                            const torch::Tensor& to) const;

  // P(y = k | theta_g, params) of params [N, D]: [N, K, G], contiguous.
  torch::Tensor category_grid(const torch::Tensor& params) const;
  // Item `item` of set s moved, its category probabilities on the grid multiplied by `ratio` [K, G]
  // (p(y = k | theta_g, new) / p(y = k | theta_g, old)): log p(y | params) after the move, and into
  // `marginal` [P] the set's marginal after it; the table is left as it is. Plain loops over the grid rows
  // of the persons who answered the item: a chain's table is a few hundred rows, on which tensor
  // operations cost more than their arithmetic.
  double moved_log_likelihood(const PersonGridTable& table, int64_t s, int64_t item, const double* ratio,
                              double* marginal) const;
  // Makes that move in set s of `table` (`marginal` as moved_log_likelihood wrote it). `table` as table()
  // made it.
  void move(PersonGridTable& table, int64_t s, int64_t item, const double* ratio, const double* marginal) const;

  // log p(y | rescaled params) [S] for the params of each set moved by
  // ItemResponseModel::rescale_abilities (location and log_scale [S]), from
  // the table of the params as they are: each person's integral of
  // N(theta; 0, 1) L_p((theta - location) e^{-log_scale}) is that of
  // e^{log_scale} N(u e^{log_scale} + location; 0, 1) L_p(u), new grid
  // weights on the same table (one pass over it). The moved grid ends short
  // of +-6 by the move: for moves of a few hundredths, as a sampler's are,
  // the log likelihood differs from the table of the moved params by ~1e-7
  // a person (tests: 1e-5 for 70 persons), far below the chains' noise.
  torch::Tensor rescaled_log_likelihood(const PersonGridTable& table, const torch::Tensor& location,
                                        const torch::Tensor& log_scale) const;

 private:
  const models::ItemResponseModel& model_;
  torch::Tensor answered_one_hot_;  // [P, J, K] float64: 1 at the observed category
  std::vector<int64_t> answer_of_;  // [J, P], item-major: the observed category, -1 where left out
  std::vector<std::vector<torch::Tensor>> persons_by_answer_;  // [J][K + 1]: who answered k; last, who left it out
  torch::Tensor grid_;              // [G] abilities
  torch::Tensor log_trapezoid_;     // [G] log(step), the ends halved
  torch::Tensor log_grid_weight_;   // [G] log(step * N(theta_g; 0, 1)), trapezoid ends halved
  torch::Tensor grid_weight_;       // [G] its exp

  // sum_j log p(y_pj | theta_g, params_j) of params [S, J, D]: [S, P, G] (a cell left out adds 0).
  torch::Tensor log_table(const torch::Tensor& params) const;
};

}  // namespace bfhpo::inference
