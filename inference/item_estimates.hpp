// Point estimates of every item's parameters from a response file: the mode
// of the items' marginal posterior (every ability integrated out, as in
// inference/marginal_likelihood.hpp; the model's prior on the items), found by
// L-BFGS in float64. `bfhpo init` reads them to place the training prior
// where the file's items lie (inference/study_from_data.hpp).
//
// A graded model's thresholds are optimised as the first one and the
// softplus of the gaps, so they stay in order; every other component is
// optimised as it is (log a, b, logit c are unbounded).
#pragma once

#include "models/simulators/item_response_model.hpp"
#include "inference/response_matrix.hpp"

#include <optional>

#include <torch/torch.h>

namespace bfhpo::inference {

// [J, D] float64, D = model.param_dim(), in the order of model.parameter_names().
torch::Tensor estimate_item_parameters(const models::ItemResponseModel& model, const ResponseMatrix& data);

// At most the memory, in MB, estimate_item_parameters holds for `persons` x
// `items` responses in `categories` categories: four persons x grid points
// tables of float64 at once (the log likelihood summed over items, it plus
// the grid's weights, logsumexp's and its gradient's temporaries) and the
// answered cells one-hot. A million persons take about 4 GB (measured:
// `bfhpo init --model 2pl` on 200,000 persons x 6 items peaks 780 MB above
// the same run without the estimate, --model rasch; this gives 803 MB).
double item_estimate_memory_mb(int64_t persons, int64_t items, int64_t categories);

// A UserError naming the data file when item_estimate_memory_mb exceeds the
// budget (none: default_inference_budget, which heeds ulimit -v), giving the
// most persons that fit: before anything is allocated.
void check_item_estimate_memory(const ResponseMatrix& data, int64_t categories,
                                std::optional<double> budget_mb = std::nullopt);

}  // namespace bfhpo::inference
