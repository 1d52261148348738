// Convergence of Markov chains: split R-hat (Gelman et al., BDA3 11.4) and
// the effective sample size of their pooled draws (BDA3 11.5 with Geyer's
// initial monotone sequence, as Stan computes it without rank
// normalisation). Used by infer's refinement (posterior_refinement.hpp) and
// by bench's reference samplers.
#pragma once

#include <torch/torch.h>

namespace bfhpo::inference {

// Split R-hat of draws [chains, S, ...] over the draws' axis 1: [...] float64.
torch::Tensor split_rhat(const torch::Tensor& chains);

// Effective sample size of draws [chains, S, ...] over the chains together: [...] float64.
torch::Tensor effective_sample_size(const torch::Tensor& chains);

}  // namespace bfhpo::inference
