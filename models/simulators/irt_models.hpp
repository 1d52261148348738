// The IRT models behind ItemResponseModel (formulas and default priors in
// simulator_spec.hpp). Each draws its item parameters in a fixed order from
// the generator, so a batch is a pure function of the seed.
#pragma once

#include "models/simulators/item_response_model.hpp"

namespace bfhpo::models {

// Rasch (1PL): target b; a = 1.
class RaschModel : public ItemResponseModel {
 public:
  explicit RaschModel(const SimulatorSpec& spec) : ItemResponseModel(spec), b_(spec.priors.b) {}
  std::vector<ScaleRole> scale_roles() const override { return {ScaleRole::Location}; }
  torch::Tensor draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const override;
  torch::Tensor exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const override;
  torch::Tensor prior_variance() const override;
  torch::Tensor log_prior(const torch::Tensor& item_params) const override;

 private:
  NormalPrior b_;
};

// 2PL: target (log a, b).
class TwoPlModel : public ItemResponseModel {
 public:
  explicit TwoPlModel(const SimulatorSpec& spec)
      : ItemResponseModel(spec), log_a_(spec.priors.log_a), b_(spec.priors.b) {}
  std::vector<ScaleRole> scale_roles() const override { return {ScaleRole::LogDiscrimination, ScaleRole::Location}; }
  torch::Tensor draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const override;
  torch::Tensor exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const override;
  torch::Tensor prior_variance() const override;
  torch::Tensor log_prior(const torch::Tensor& item_params) const override;

 private:
  NormalPrior log_a_, b_;
};

// 3PL: target (log a, b, logit c), c ~ Beta(alpha, beta) drawn as a ratio of
// gammas so logit c = log G1 - log G2 exactly; Var(logit c) = trigamma(alpha)
// + trigamma(beta).
class ThreePlModel : public ItemResponseModel {
 public:
  explicit ThreePlModel(const SimulatorSpec& spec)
      : ItemResponseModel(spec), log_a_(spec.priors.log_a), b_(spec.priors.b), c_(spec.priors.c) {}
  std::vector<ScaleRole> scale_roles() const override {
    return {ScaleRole::LogDiscrimination, ScaleRole::Location, ScaleRole::Fixed};
  }
  torch::Tensor draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const override;
  torch::Tensor exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const override;
  torch::Tensor prior_variance() const override;
  torch::Tensor log_prior(const torch::Tensor& item_params) const override;

 private:
  NormalPrior log_a_, b_;
  BetaPrior c_;
};

// Graded response model (Samejima) with K categories: target (log a,
// b_1..b_{K-1}), the thresholds K-1 sorted draws of the thresholds' normal.
// Their prior variances are those of normal order statistics, computed once
// by quadrature of the order statistics' densities (no closed form).
class GradedResponseModel : public ItemResponseModel {
 public:
  explicit GradedResponseModel(const SimulatorSpec& spec);
  int64_t n_categories() const override { return n_categories_; }
  std::vector<ScaleRole> scale_roles() const override {
    std::vector<ScaleRole> roles(static_cast<size_t>(n_categories_), ScaleRole::Location);
    roles[0] = ScaleRole::LogDiscrimination;
    return roles;
  }
  torch::Tensor draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const override;
  torch::Tensor exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const override;
  torch::Tensor prior_variance() const override { return prior_variance_; }
  torch::Tensor log_prior(const torch::Tensor& item_params) const override;

 private:
  int64_t n_categories_;
  NormalPrior log_a_, thresholds_;
  torch::Tensor prior_variance_;
};

}  // namespace bfhpo::models
