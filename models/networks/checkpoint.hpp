// Gradient checkpointing for LibTorch, which has no torch::utils::checkpoint.
// checkpoint(fn, inputs, params) returns fn(inputs) computed under no-grad, so
// none of fn's intermediate activations stay alive; the result is attached to
// the graph by a custom torch::autograd::Function whose backward re-runs fn
// with grad enabled on detached copies of the inputs and backpropagates the
// incoming gradient into `inputs` and `params` (the parameters fn reads).
// The CPU (and, when used, CUDA) RNG state at the forward call is restored for
// the recomputation, so dropout draws the same mask; the caller's RNG state
// after backward is what it was before the recomputation.
//
// Gradients equal those of calling fn directly (tested). Peak memory of a
// backward through several checkpointed calls is one call's activations.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace bfhpo::models {

using CheckpointedFn = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

torch::Tensor checkpoint(CheckpointedFn fn, const std::vector<torch::Tensor>& inputs,
                         const std::vector<torch::Tensor>& params);

}  // namespace bfhpo::models
