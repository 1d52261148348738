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

#include <torch/torch.h>

namespace bfhpo::inference {

// [J, D] float64, D = model.param_dim(), in the order of model.parameter_names().
torch::Tensor estimate_item_parameters(const models::ItemResponseModel& model, const ResponseMatrix& data);

}  // namespace bfhpo::inference
