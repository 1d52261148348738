#include "models/simulators/item_response_model.hpp"

#include "models/simulators/irt_models.hpp"

#include <stdexcept>

namespace bfhpo::models {

std::shared_ptr<const ItemResponseModel> make_item_response_model(const SimulatorSpec& spec) {
  if (spec.model == "rasch") return std::make_shared<RaschModel>(spec);
  if (spec.model == "2pl") return std::make_shared<TwoPlModel>(spec);
  if (spec.model == "3pl") return std::make_shared<ThreePlModel>(spec);
  if (spec.model == "grm") return std::make_shared<GradedResponseModel>(spec);
  throw std::invalid_argument("make_item_response_model: unknown model \"" + spec.model + "\"");
}

torch::Tensor ItemResponseModel::rescale_abilities(const torch::Tensor& item_params, const torch::Tensor& location,
                                                  const torch::Tensor& log_scale) const {
  const auto roles = scale_roles();
  const auto shift = location.reshape({-1, 1});
  const auto scale = log_scale.reshape({-1, 1});
  std::vector<torch::Tensor> components;
  for (size_t d = 0; d < roles.size(); ++d) {
    const auto component = item_params.select(-1, static_cast<int64_t>(d));
    if (roles[d] == ScaleRole::Location) components.push_back(component * scale.exp() + shift);
    else if (roles[d] == ScaleRole::LogDiscrimination) components.push_back(component - scale);
    else components.push_back(component);
  }
  return torch::stack(components, -1);
}

torch::Tensor category_probabilities(const ItemResponseModel& model, const torch::Tensor& theta,
                                     const torch::Tensor& item_params) {
  const auto exceed = model.exceedance_probabilities(theta, item_params);  // P(y >= k), k = 1..K-1
  const auto one = torch::ones_like(exceed.narrow(-1, 0, 1));
  const auto at_least = torch::cat({one, exceed}, -1);                      // k = 0..K-1
  const auto above = torch::cat({exceed, torch::zeros_like(one)}, -1);      // P(y >= k+1)
  return at_least - above;
}

}  // namespace bfhpo::models
