// A tiny IRT approximator spec shared by the models and trials tests: small
// enough that a training step takes milliseconds, large enough that the
// per-item stage dominates memory so chunking and batch size matter.
#pragma once

#include "models/approximator_spec.hpp"
#include "models/simulators/item_response_model.hpp"
#include "models/simulators/simulator_spec.hpp"

#include <string>

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

// A simulator of `model` at fixed or ranged shapes.
inline models::SimulatorSpec simulator_at(models::IrtRanges ranges, const std::string& model = "2pl",
                                          int64_t n_categories = 2, double missing = 0.0) {
  models::SimulatorSpec spec;
  spec.model = model;
  spec.n_categories = n_categories;
  spec.ranges = ranges;
  spec.missing = {missing, missing};
  return spec;
}

// tiny_spec() for the simulator's model (its target dimension and categories).
inline models::ApproximatorSpec tiny_spec_for(const models::SimulatorSpec& simulator) {
  models::ApproximatorSpec spec = tiny_spec();
  const auto model = models::make_item_response_model(simulator);
  spec.param_dim = model->param_dim();
  spec.n_categories = model->n_categories();
  return spec;
}

}  // namespace bfhpo::test
