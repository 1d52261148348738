// A trained approximator as a TorchScript module that Python's torch (1.13 or
// later) loads with torch.jit.load and calls without bfhpo:
//
//   model = torch.jit.load("weights.torchscript.pt")
//   torch.manual_seed(1)
//   draws = model.sample(responses, 1000)     # [P, J] (NaN: missing) -> [J, 1000, D] (parameter_names)
//   log_q = model.log_prob(draws, responses)  # theta [J, D] or [J, n, D] -> [J] or [J, n]
//
// A leading batch dimension on both arguments is kept ([B, P, J] -> [B, J, n, 2]).
// LibTorch cannot script C++ modules, so the module is assembled here: every
// parameter and buffer of the approximator is registered under its dotted
// name with "." replaced by "__", and torchscript_source(spec) -- TorchScript
// generated from the ApproximatorSpec -- is define()d: the summary network
// and the flow in eval mode (no dropout, frozen standardization), operation
// by operation as models/networks/ computes them, so the same responses and
// generator state give ContinuousApproximatorImpl's draws and log-probs to
// float rounding. `sample` draws its standard-normal base values with one
// torch.randn of shape [B*J*n, D] from the global generator, as
// ContinuousApproximatorImpl::sample does.
// Attributes: parameter_names (the model's, e.g. ["log_a", "b"]) and spec (the ApproximatorSpec as JSON text).
#pragma once

#include "models/approximator.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace bfhpo::models {

std::string torchscript_source(const ApproximatorSpec& spec);

void save_torchscript(ContinuousApproximatorImpl& approximator, const std::vector<std::string>& parameter_names,
                      std::ostream& out);

}  // namespace bfhpo::models
