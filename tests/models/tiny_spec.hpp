// A tiny IRT approximator spec shared by the models and trials tests: small
// enough that a training step takes milliseconds, large enough that the
// per-item stage dominates memory so chunking and batch size matter.
#pragma once

#include "models/approximator_spec.hpp"

namespace bfhpo::test {

inline models::ApproximatorSpec tiny_spec() {
  models::ApproximatorSpec spec;
  spec.summary.cell_dim = 8;
  spec.summary.cell_mlp_width = 32;
  spec.summary.cell_mlp_depth = 2;
  spec.summary.embed_dim = 16;
  spec.summary.attention_heads = 2;
  spec.summary.attention_layers = 1;
  spec.summary.summary_dim = 8;
  spec.flow.depth = 2;
  spec.flow.subnet_width = 16;
  spec.flow.subnet_depth = 1;
  return spec;
}

}  // namespace bfhpo::test
