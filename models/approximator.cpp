#include "models/approximator.hpp"

#include "models/calibration_penalty.hpp"

#include <stdexcept>

namespace bfhpo::models {

ContinuousApproximatorImpl::ContinuousApproximatorImpl(ApproximatorSpec spec, uint64_t seed)
    : spec_(std::move(spec)) {
  summary_ = register_module("summary", SummaryNetwork(spec_.summary, spec_.memory, spec_.n_categories));
  standardization_ = register_module("standardization", RunningStandardization(spec_.param_dim));
  flow_ = register_module("flow", CouplingFlow(spec_.param_dim, spec_.context_dim(), spec_.flow, seed));
}

torch::Tensor ContinuousApproximatorImpl::condition_rows(const torch::Tensor& responses, const torch::Tensor& mask) {
  const auto condition = summary_->forward(responses, mask).per_item_condition();
  return condition.reshape({-1, condition.size(-1)});
}

torch::Tensor ContinuousApproximatorImpl::standardized_rows(const torch::Tensor& item_params) {
  if (item_params.dim() < 3 || item_params.dim() > 4 || item_params.size(-1) != spec_.param_dim)
    throw std::invalid_argument("approximator: item_params must be [B, J, param_dim] or [B, J, n, param_dim]");
  return standardization_->forward(item_params.reshape({-1, spec_.param_dim}));
}

LossTerms ContinuousApproximatorImpl::loss(const torch::Tensor& responses, const torch::Tensor& item_params,
                                           const torch::Tensor& mask) {
  const auto theta = standardized_rows(item_params);
  const auto condition = condition_rows(responses, mask);
  LossTerms terms;
  terms.nll = original_space_nll(flow_->log_prob(theta, condition));
  terms.total = terms.nll;
  return terms;
}

void ContinuousApproximatorImpl::update_standardization(const torch::Tensor& item_params) {
  if (is_training()) standardized_rows(item_params);
}

void ContinuousApproximatorImpl::hold_standardization(bool hold) { standardization_->train(is_training() && !hold); }

bool ContinuousApproximatorImpl::loss_splits_by_data_set() const {
  return spec_.summary.dropout == 0.0 && spec_.flow.dropout == 0.0 && flow_->initialized();
}

torch::Tensor ContinuousApproximatorImpl::log_prob(const torch::Tensor& item_params, const torch::Tensor& responses,
                                                   const torch::Tensor& mask) {
  const auto theta = standardized_rows(item_params);
  auto condition = condition_rows(responses, mask);
  if (item_params.dim() == 4) condition = condition.repeat_interleave(item_params.size(2), 0);
  const auto log_q = flow_->log_prob(theta, condition) + standardization_->log_det_jacobian();
  auto shape = item_params.sizes().vec();
  shape.pop_back();
  return log_q.reshape(shape);
}

std::pair<torch::Tensor, torch::Tensor> ContinuousApproximatorImpl::sample(int64_t n, const torch::Tensor& responses,
                                                                           const torch::Tensor& mask,
                                                                           c10::optional<at::Generator> generator) {
  return sample_given(n, summarize(responses, mask), std::move(generator));
}

SummaryOutput ContinuousApproximatorImpl::summarize(const torch::Tensor& responses, const torch::Tensor& mask) {
  return summary_->forward(responses, mask);
}

std::pair<torch::Tensor, torch::Tensor> ContinuousApproximatorImpl::sample_given(int64_t n, const SummaryOutput& summary,
                                                                                 c10::optional<at::Generator> generator) {
  const auto condition = summary.per_item_condition();  // [B, J, C]
  const int64_t sets = condition.size(0), items = condition.size(1);
  const auto [theta, log_q] =
      flow_->sample(n, condition.reshape({-1, condition.size(-1)}), std::move(generator));  // [B*J, n, D], [B*J, n]
  return {standardization_->inverse(theta).reshape({sets, items, n, spec_.param_dim}),
          (log_q + standardization_->log_det_jacobian()).reshape({sets, items, n})};
}

torch::Tensor ContinuousApproximatorImpl::original_space_nll(const torch::Tensor& flow_log_prob) {
  return -(flow_log_prob + standardization_->log_det_jacobian()).mean();
}

void ContinuousApproximatorImpl::set_memory_config(MemoryConfig memory) {
  summary_->set_memory_config(memory);
  spec_.memory = memory;
}

CalibratedApproximatorImpl::CalibratedApproximatorImpl(ApproximatorSpec spec, uint64_t seed)
    : ContinuousApproximatorImpl(std::move(spec), seed) {}

LossTerms CalibratedApproximatorImpl::loss(const torch::Tensor& responses, const torch::Tensor& item_params,
                                           const torch::Tensor& mask) {
  const auto theta = standardized_rows(item_params);
  const auto condition = condition_rows(responses, mask);
  LossTerms terms;
  terms.nll = original_space_nll(flow()->log_prob(theta, condition));
  terms.calibration = spec().calibration.weight * calibration_penalty(flow(), theta, condition, spec().calibration);
  terms.total = terms.nll + terms.calibration;
  return terms;
}

std::shared_ptr<ContinuousApproximatorImpl> make_approximator(const ApproximatorSpec& spec, uint64_t seed) {
  if (spec.calibration.enabled) return std::make_shared<CalibratedApproximatorImpl>(spec, seed);
  return std::make_shared<ContinuousApproximatorImpl>(spec, seed);
}

}  // namespace bfhpo::models
