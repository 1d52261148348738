// Amortized posterior approximators for the IRT target: each item's
// parameters theta_j (spec.param_dim of them, e.g. (log a_j, b_j)) given a
// response matrix and its mask of observed cells.
//
//   responses, mask [B, P, J] --SummaryNetwork--> condition [B, J, C]
//   theta [B, J, D] --RunningStandardization--> z-space --CouplingFlow | condition
//
// ContinuousApproximator: loss = mean NLL of the true item parameters over
// the B*J items. log_prob and sample work in the original parameter space
// (the standardization's log-Jacobian is included).
// CalibratedApproximator: loss = NLL + weight * calibration penalty
// (models/calibration_penalty.hpp), the penalty computed on the flow in
// standardized space over the B*J items of the batch; its log-prob
// evaluations are chunked and checkpointed, so its memory scales with
// calibration.log_prob_chunk_size, not with n_post_samples.
// make_approximator picks the class from spec.calibration.enabled.
#pragma once

#include "models/approximator_spec.hpp"
#include "models/networks/coupling_flow.hpp"
#include "models/networks/mlp.hpp"
#include "models/networks/summary_network.hpp"

#include <torch/torch.h>

#include <memory>

namespace bfhpo::models {

struct LossTerms {
  torch::Tensor total;        // what the optimizer minimises
  torch::Tensor nll;          // mean negative log-likelihood of the true params, original space
  torch::Tensor calibration;  // the weighted-in penalty; undefined for a ContinuousApproximator
};

class ContinuousApproximatorImpl : public torch::nn::Module {
 public:
  explicit ContinuousApproximatorImpl(ApproximatorSpec spec, uint64_t seed = 0);
  ~ContinuousApproximatorImpl() override = default;

  // responses [B, P, J], item_params [B, J, D], mask [B, P, J] (1 observed,
  // 0 missing; undefined: all observed). In training mode the
  // standardization's statistics are updated from item_params first.
  virtual LossTerms loss(const torch::Tensor& responses, const torch::Tensor& item_params,
                         const torch::Tensor& mask = {});
  // log q(item_params | responses) per item: [B, J, D] -> [B, J]; several
  // values per item (posterior draws) [B, J, n, D] -> [B, J, n].
  torch::Tensor log_prob(const torch::Tensor& item_params, const torch::Tensor& responses,
                         const torch::Tensor& mask = {});
  // n posterior draws per item [B, J, n, D], and each draw's log q [B, J, n]
  // from the same pass (log_prob's value for them, up to float rounding),
  // from `generator` (none: the global torch RNG).
  std::pair<torch::Tensor, torch::Tensor> sample(int64_t n, const torch::Tensor& responses, const torch::Tensor& mask = {},
                                                 c10::optional<at::Generator> generator = c10::nullopt);
  // The summary network's output that sample() conditions on, for responses and mask [B, P, J]; and sample()
  // given it (the same draws), for callers that draw again or read the summary too.
  SummaryOutput summarize(const torch::Tensor& responses, const torch::Tensor& mask = {});
  std::pair<torch::Tensor, torch::Tensor> sample_given(int64_t n, const SummaryOutput& summary,
                                                       c10::optional<at::Generator> generator = c10::nullopt);

  // For a batch whose loss is computed in parts along its data sets (trials/split_step.hpp). In training mode
  // update_standardization does what loss() does first: the running standardization's statistics updated from
  // the whole batch's item_params [B, J, D]. While hold_standardization(true) is in force, loss() leaves them
  // as they are (the standardization in eval mode), so each part is standardized as the whole batch would be.
  void update_standardization(const torch::Tensor& item_params);
  void hold_standardization(bool hold);
  // Whether loss() of a part of the batch along its data sets is exactly that part's share of the whole
  // batch's, computed from the data sets of the part alone, with no random numbers drawn: no dropout, no
  // calibration penalty (its posterior draws are random), and no actnorm left to initialise itself from the
  // data it first sees. Everything else (summary, item fit, attention, flow) is per data set.
  virtual bool loss_splits_by_data_set() const;

  const ApproximatorSpec& spec() const { return spec_; }
  SummaryNetwork& summary_network() { return summary_; }
  const RunningStandardization& standardization() const { return standardization_; }
  // Applies a MemoryConfig to the summary network and records it in spec().
  void set_memory_config(MemoryConfig memory);

 protected:
  // Flow rows: the summary's condition [B*J, C] and theta standardized [B*J, D].
  torch::Tensor condition_rows(const torch::Tensor& responses, const torch::Tensor& mask);
  torch::Tensor standardized_rows(const torch::Tensor& item_params);
  // Mean NLL in the original parameter space from the flow's log-probs in the
  // standardized one (the standardization's log-Jacobian is a constant of the
  // buffers, so the gradient is the flow's).
  torch::Tensor original_space_nll(const torch::Tensor& flow_log_prob);
  CouplingFlow& flow() { return flow_; }

 private:
  ApproximatorSpec spec_;
  SummaryNetwork summary_{nullptr};
  RunningStandardization standardization_{nullptr};
  CouplingFlow flow_{nullptr};
};
TORCH_MODULE(ContinuousApproximator);

class CalibratedApproximatorImpl : public ContinuousApproximatorImpl {
 public:
  explicit CalibratedApproximatorImpl(ApproximatorSpec spec, uint64_t seed = 0);
  LossTerms loss(const torch::Tensor& responses, const torch::Tensor& item_params,
                 const torch::Tensor& mask = {}) override;
  bool loss_splits_by_data_set() const override { return false; }
};

std::shared_ptr<ContinuousApproximatorImpl> make_approximator(const ApproximatorSpec& spec, uint64_t seed = 0);

}  // namespace bfhpo::models
