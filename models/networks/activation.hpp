// The hidden-layer activations of the networks' MLPs. LibTorch-free, so the
// architecture description (models/approximator_spec.hpp) is too.
#pragma once

namespace bfhpo::models {

enum class Activation { relu, silu, gelu };

}  // namespace bfhpo::models
