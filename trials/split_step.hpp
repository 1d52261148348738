// A CPU training step's loss and gradient computed in parts of its batch
// along the data sets, one part a worker thread, each worker on one intra-op
// thread: how a step uses a second core.
//
// Why: at the shapes bfhpo trains on a CPU a step is a few hundred products
// and elementwise passes over tensors of 10^4-10^7 elements. LibTorch's
// intra-op threads (OpenMP) and OpenBLAS's split each one and meet after each:
// on an idle 2-core machine two threads bought nothing (2PL 500 x 20, B 32:
// 0.70 s a step on one thread, 0.72 with two, 1.35 with both pools at two),
// on a busy one they cost 2 to 30 times the wall time. The data sets of a
// batch are independent through the summary network and the flow, so parts
// of the batch run side by side and meet once, to sum their gradients
// (bench/README.md, "A training step's arithmetic").
//
// The result is the whole batch's: the approximator's loss is the mean over
// the batch's B x J items (one J for every data set of a batch), so each
// part's loss is weighted by its share of the data sets; the standardization
// is updated once from the whole batch and held while the parts run; the
// parts' gradients are added in part order, so the same parts give the same
// values on every run (trials/reproduction.hpp), and a split step's loss and
// gradient equal the whole step's up to float rounding.
#pragma once

#include "models/approximator.hpp"
#include "models/simulators/simulator.hpp"

#include <cstdint>

namespace bfhpo::trials {

// How many parts a step on `batch_size` data sets takes with `threads`
// intra-op threads on `device`: min(threads, batch_size) on the CPU when the
// approximator's loss splits (models::ContinuousApproximatorImpl::
// loss_splits_by_data_set), else 1.
int64_t step_parts(const models::ContinuousApproximatorImpl& approximator, int64_t batch_size, int threads,
                   const torch::Device& device);

// The batch's loss, its gradient added to every parameter's grad, computed
// in `parts` (>= 2) parts of about equal size on as many threads (the
// calling thread runs the first). The approximator in training mode; an
// exception from any part is rethrown once all have stopped, with no
// gradient added.
double split_loss_backward(models::ContinuousApproximatorImpl& approximator, const models::SimulatedBatch& batch,
                           int64_t parts);

}  // namespace bfhpo::trials
