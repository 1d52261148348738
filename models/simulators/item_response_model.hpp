// ItemResponseModel: what distinguishes one IRT model from another -- its
// item parameters (the inference target), their prior, and the probability
// of each response given a person's ability. Simulator (simulator.hpp) does
// the rest (shapes, abilities, seeds, missing cells) for every model alike.
// The models and their priors are listed in simulator_spec.hpp; nothing
// outside models/ names a model.
#pragma once

#include "models/simulators/simulator_spec.hpp"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace bfhpo::models {

class ItemResponseModel {
 public:
  explicit ItemResponseModel(const SimulatorSpec& spec) : parameter_names_(item_parameter_names(spec)) {}
  virtual ~ItemResponseModel() = default;

  // Names of the inference target's components, e.g. {"log_a", "b"}
  // (item_parameter_names, simulator_spec.hpp).
  const std::vector<std::string>& parameter_names() const { return parameter_names_; }
  int64_t param_dim() const { return static_cast<int64_t>(parameter_names().size()); }
  // Responses take the values 0..n_categories()-1.
  virtual int64_t n_categories() const { return 2; }

  // Item parameters [batch, items, param_dim] (float32, CPU) drawn from the
  // prior with `generator`.
  virtual torch::Tensor draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const = 0;
  // P(y_pj >= k) for k = 1..K-1 given abilities theta [B, P] and item params
  // [B, J, D]: [B, P, J, K-1], non-increasing in k.
  virtual torch::Tensor exceedance_probabilities(const torch::Tensor& theta,
                                                 const torch::Tensor& item_params) const = 0;
  // The prior variance of each target component [D] (float64), for the
  // posterior contraction.
  virtual torch::Tensor prior_variance() const = 0;
  // log p(item params) under the prior, item params [..., D] -> [...], in the
  // target's own coordinates (e.g. the density of logit c, not of c); -inf
  // outside the support (GRM thresholds out of order). For samplers that need
  // the prior's density (the MCMC reference of bench/posterior_quality).
  virtual torch::Tensor log_prior(const torch::Tensor& item_params) const = 0;

  // How each target component moves when the abilities' location and scale
  // move (they are fixed only by theta ~ N(0, 1)): a difficulty or threshold
  // as theta does, a log discrimination against its scale, the rest not.
  enum class ScaleRole { Location, LogDiscrimination, Fixed };
  virtual std::vector<ScaleRole> scale_roles() const = 0;
  // Item params [C, J, D] under which ability e^{log_scale_c} theta +
  // location_c answers as theta does under `item_params` (location and
  // log_scale [C], float64): log a - log_scale, b e^{log_scale} + location.
  // The map's log |det| is log_scale x J x (the Location components of an item).
  // A model without a LogDiscrimination component (Rasch) admits log_scale 0 only.
  torch::Tensor rescale_abilities(const torch::Tensor& item_params, const torch::Tensor& location,
                                  const torch::Tensor& log_scale) const;

 private:
  std::vector<std::string> parameter_names_;
};

// The model `spec.model` names, with spec's priors and categories.
std::shared_ptr<const ItemResponseModel> make_item_response_model(const SimulatorSpec& spec);

// P(y_pj = k) for k = 0..K-1: [B, P, J, K] (rows sum to 1).
torch::Tensor category_probabilities(const ItemResponseModel& model, const torch::Tensor& theta,
                                     const torch::Tensor& item_params);

}  // namespace bfhpo::models
