// Closed-form peak memory of one training step (forward, backward, Adam step)
// of an approximator described by an ApproximatorSpec, at a given shape --
// without building the network or allocating a tensor. This is the memory
// gate: trials whose estimate exceeds the budget are pruned before launch,
// and the TPE sampler uses it to veto candidates.
//
// The estimate is the sum of terms, each documented in estimate.cpp with the
// tensors it counts, taken at the moment of the step's peak:
//   parameters      every weight and buffer (float32)
//   gradients       one per parameter
//   optimizer       Adam's exp_avg and exp_avg_sq (2 x parameters)
//   batch           the simulated batch: responses, mask, item params, abilities
//   summary         saved activations of the summary network: the per-item
//                   stage over all items and persons, or with gradient
//                   checkpointing only its chunk outputs (the one piece --
//                   an item chunk's person chunk -- recomputed in backward
//                   counts as transient); attention blocks over items
//   flow            saved activations of the coupling flow over B*J rows
//   calibration     the calibration term (estimate_calibration_memory)
//   transient       the largest short-lived buffer of the step on top
//   workspace       CUDA: the cuBLAS workspaces the step's matmuls hold
//                   (memory/cublas_workspace.hpp), allocator memory
//   context         CUDA: the context, outside the allocator
// A device profile maps tensor bytes to device bytes: CPU exact bytes; CUDA
// rounds every allocation as the caching allocator does (with the settings of
// PYTORCH_ALLOC_CONF) and adds workspaces and context. peak_mb - context_mb
// is what the caching allocator's allocated-bytes peak should show.
// Checked against the CPU meter on a grid of configurations (bench/).
#pragma once

#include "memory/device_profile.hpp"
#include "models/approximator_spec.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace bfhpo::memory {

struct StepShape {
  int64_t batch_size = 32;
  int64_t n_items = 50;     // worst case: the study's max items
  int64_t n_persons = 500;  // worst case: the study's max persons
};

struct MemoryEstimate {
  double parameters_mb = 0, gradients_mb = 0, optimizer_mb = 0, batch_mb = 0, summary_mb = 0, flow_mb = 0,
         calibration_mb = 0, transient_mb = 0, workspace_mb = 0, context_mb = 0;
  double peak_mb = 0;  // the sum

  nlohmann::json to_json() const;
};

// Microseconds, allocates no tensor. A shape with a size below 1 or an item
// or person chunk below 1 is std::invalid_argument.
MemoryEstimate estimate_peak_memory(const models::ApproximatorSpec& spec, const StepShape& shape,
                                    const DeviceProfile& profile = DeviceProfile{});
// Seed API: the peak alone.
double estimate_peak_memory_mb(const models::ApproximatorSpec& spec, const StepShape& shape,
                               const DeviceProfile& profile = DeviceProfile{});
// The calibration term alone: n_rows = batch_size * n_items flow rows, each
// with n_post_samples draws of param_dim, log-probs in chunks of log_prob_chunk_size.
// The flow's widths come from spec (spec.calibration is not read). MB. A size
// below 1 is std::invalid_argument.
double estimate_calibration_memory(int64_t n_rows, int64_t n_post_samples, int64_t param_dim,
                                   int64_t log_prob_chunk_size, const models::ApproximatorSpec& spec,
                                   const DeviceProfile& profile = DeviceProfile{});
// True when peak_mb is above budget_mb (a peak equal to the budget fits; a
// NaN peak does not). budget_mb must be positive (infinity: no limit), else
// std::invalid_argument.
bool exceeds_memory_budget(double peak_mb, double budget_mb);

}  // namespace bfhpo::memory
