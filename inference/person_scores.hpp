// Every person's ability: the posterior of theta_p given the responses,
// integrated over the item parameters' posterior, not a plug-in of their
// means (mirt's fscores(EAP) plugs in; Stan's theta integrates):
//   p(theta_p | y) = E over items ~ p(items | y) of p(theta_p | y_p, items),
// the expectation an average over `item_draws` of the posterior draws
// (evenly spaced among them; all when there are fewer), each person's
// conditional posterior exact on the ability grid (ability_grid.hpp; the
// N(0, 1) prior the simulator draws abilities from; missing cells left out
// of the likelihood). The mixture on the grid is read as a histogram (each
// grid point's mass spread over its 0.1 wide cell), so quantiles are linear
// interpolations of its distribution function and plausible values are
// draws from it (Mislevy 1991: each a draw of a person's ability from its
// posterior, the right input for secondary analyses). A person with no
// answered item gets the prior back.
//
// Cost: item_draws x persons x items x grid points, in chunks of draws whose
// float32 tables (GridAbilityPosterior) hold at most kGridTableElements, or
// a sum over the rows of a DrawAbilityTable the caller holds (the same bits).
// Deterministic for the same draws, data and seed.
#pragma once

#include "inference/grid_ability_posterior.hpp"
#include "inference/posterior_inference.hpp"
#include "inference/response_matrix.hpp"
#include "models/simulators/item_response_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct PersonScoreOptions {
  int64_t item_draws = 200;
  int64_t plausible_values = 0;  // M draws a person
  uint64_t seed = 1;
};

struct PersonScores {
  std::vector<std::string> person_ids;  // the file's ids, else the rows' numbers 1..P
  torch::Tensor summary;                // [P, 5] float64: mean (EAP), sd, q2.5, q50, q97.5
  torch::Tensor plausible_values;       // [P, M] float64

  // person,theta_mean,theta_sd,theta_q2.5,theta_q50,theta_q97.5[,pv1..pvM], 10 significant digits.
  std::string to_csv() const;
};

// `table`: the posterior draws' grid posteriors when the caller holds them (read instead of computed).
PersonScores score_persons(const models::ItemResponseModel& model, const ResponseMatrix& data,
                           const PosteriorDraws& posterior, const PersonScoreOptions& options,
                           const DrawAbilityTable* table = nullptr);

}  // namespace bfhpo::inference
