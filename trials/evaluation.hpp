// Posterior diagnostics of a trained approximator on a fixed, seeded set of
// simulated datasets (disjoint from the training and validation seeds):
// n_draws posterior draws for every item of every dataset, compared with the
// true item parameters (models/diagnostics.hpp), and the per-item posterior
// summaries the report draws. Runs in eval mode without
// gradients, `batch_size` datasets and `draw_chunk` draws at a time; when that
// runs out of memory, the batch is halved and the evaluation restarted (down
// to one dataset), so a trial that trained never fails in its evaluation.
#pragma once

#include "models/approximator.hpp"
#include "models/diagnostics.hpp"
#include "models/simulators/simulator.hpp"

namespace bfhpo::trials {

struct EvaluationOptions {
  int64_t n_datasets = 64;
  int64_t n_draws = 100;
  int64_t batch_size = 16;
  int64_t draw_chunk = 25;
  uint64_t seed = 1;
};

struct PosteriorEvaluation {
  models::Diagnostics diagnostics;
  models::PosteriorItems items;  // per item, for the report's plots
};

PosteriorEvaluation evaluate_posterior(models::ContinuousApproximatorImpl& approximator,
                                       const models::SimulatorSpec& simulator,
                                       const EvaluationOptions& options, torch::Device device);

}  // namespace bfhpo::trials
