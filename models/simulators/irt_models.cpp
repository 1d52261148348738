#include "models/simulators/irt_models.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace bfhpo::models {
namespace {

const auto kFloat = torch::TensorOptions().dtype(torch::kFloat32);

torch::Tensor normal(const NormalPrior& prior, at::IntArrayRef size, at::Generator& generator) {
  return at::normal(prior.mean, prior.sd, size, generator, kFloat);
}

// sigmoid(a (theta - b)) at [B, P, J] from theta [B, P], a and b [B, J].
torch::Tensor item_curve(const torch::Tensor& theta, const torch::Tensor& a, const torch::Tensor& b) {
  return torch::sigmoid(a.unsqueeze(1) * (theta.unsqueeze(2) - b.unsqueeze(1)));
}

torch::Tensor normal_log_density(const NormalPrior& prior, const torch::Tensor& x) {
  const auto z = (x - prior.mean) / prior.sd;
  return -0.5 * z * z - std::log(prior.sd) - 0.5 * std::log(2.0 * M_PI);
}

// The variances of the n order statistics of n independent N(0, 1) draws: [n] float64. The r-th has density
// n! / ((r-1)! (n-r)!) Phi^{r-1} (1 - Phi)^{n-r} phi; its moments by the trapezoid rule on [-12, 12] in steps
// of 1e-3 (for integrands this smooth with Gaussian tails the rule's error is below double precision, and the
// mass beyond +-12 is 1e-32).
torch::Tensor sorted_normal_variances(int64_t n) {
  constexpr double kLimit = 12.0, kStep = 1e-3;
  const int64_t points = static_cast<int64_t>(2.0 * kLimit / kStep) + 1;
  std::vector<double> variances;
  for (int64_t r = 1; r <= n; ++r) {
    const double log_count = std::lgamma(double(n + 1)) - std::lgamma(double(r)) - std::lgamma(double(n - r + 1));
    double mass = 0.0, first = 0.0, second = 0.0;
    for (int64_t i = 0; i < points; ++i) {
      const double x = -kLimit + kStep * static_cast<double>(i);
      const double below = 0.5 * std::erfc(-x / std::sqrt(2.0)), above = 0.5 * std::erfc(x / std::sqrt(2.0));
      const double log_density = log_count + double(r - 1) * std::log(below) + double(n - r) * std::log(above) -
                                 0.5 * x * x - 0.5 * std::log(2.0 * M_PI);
      const double weight = (i == 0 || i == points - 1 ? 0.5 : 1.0) * kStep * std::exp(log_density);
      mass += weight;
      first += weight * x;
      second += weight * x * x;
    }
    const double mean = first / mass;
    variances.push_back(second / mass - mean * mean);
  }
  return torch::tensor(variances, torch::kFloat64);
}

}  // namespace

torch::Tensor RaschModel::log_prior(const torch::Tensor& item_params) const {
  return normal_log_density(b_, item_params.select(-1, 0));
}

torch::Tensor RaschModel::draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const {
  return normal(b_, {batch, items, 1}, generator);
}

torch::Tensor RaschModel::exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const {
  const auto b = item_params.select(-1, 0);
  return torch::sigmoid(theta.unsqueeze(2) - b.unsqueeze(1)).unsqueeze(-1);
}

torch::Tensor RaschModel::prior_variance() const { return torch::tensor({b_.sd * b_.sd}, torch::kFloat64); }

torch::Tensor TwoPlModel::draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const {
  const auto b = normal(b_, {batch, items}, generator);
  const auto log_a = normal(log_a_, {batch, items}, generator);
  return torch::stack({log_a, b}, -1);
}

torch::Tensor TwoPlModel::exceedance_probabilities(const torch::Tensor& theta, const torch::Tensor& item_params) const {
  return item_curve(theta, item_params.select(-1, 0).exp(), item_params.select(-1, 1)).unsqueeze(-1);
}

torch::Tensor TwoPlModel::prior_variance() const {
  return torch::tensor({log_a_.sd * log_a_.sd, b_.sd * b_.sd}, torch::kFloat64);
}

torch::Tensor TwoPlModel::log_prior(const torch::Tensor& item_params) const {
  return normal_log_density(log_a_, item_params.select(-1, 0)) + normal_log_density(b_, item_params.select(-1, 1));
}

torch::Tensor ThreePlModel::draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const {
  const auto b = normal(b_, {batch, items}, generator);
  const auto log_a = normal(log_a_, {batch, items}, generator);
  // Gamma draws in float64: a small shape's draws can underflow float32.
  const auto shape = [&](double value) { return torch::full({batch, items}, value, torch::kFloat64); };
  const auto g1 = at::_standard_gamma(shape(c_.alpha), generator);
  const auto g2 = at::_standard_gamma(shape(c_.beta), generator);
  const auto logit_c = (g1.log() - g2.log()).to(torch::kFloat32);
  return torch::stack({log_a, b, logit_c}, -1);
}

torch::Tensor ThreePlModel::exceedance_probabilities(const torch::Tensor& theta,
                                                     const torch::Tensor& item_params) const {
  const auto c = torch::sigmoid(item_params.select(-1, 2)).unsqueeze(1);
  const auto curve = item_curve(theta, item_params.select(-1, 0).exp(), item_params.select(-1, 1));
  return (c + (1 - c) * curve).unsqueeze(-1);
}

torch::Tensor ThreePlModel::prior_variance() const {
  const double logit_c = torch::polygamma(1, torch::tensor({c_.alpha, c_.beta}, torch::kFloat64)).sum().item<double>();
  return torch::tensor({log_a_.sd * log_a_.sd, b_.sd * b_.sd, logit_c}, torch::kFloat64);
}

// x = logit c with c ~ Beta(alpha, beta): p(x) = c^alpha (1 - c)^beta / B(alpha, beta).
torch::Tensor ThreePlModel::log_prior(const torch::Tensor& item_params) const {
  const auto x = item_params.select(-1, 2);
  const double log_beta_function = std::lgamma(c_.alpha) + std::lgamma(c_.beta) - std::lgamma(c_.alpha + c_.beta);
  const auto logit_c = c_.alpha * torch::log_sigmoid(x) + c_.beta * torch::log_sigmoid(-x) - log_beta_function;
  return normal_log_density(log_a_, item_params.select(-1, 0)) + normal_log_density(b_, item_params.select(-1, 1)) +
         logit_c;
}

GradedResponseModel::GradedResponseModel(const SimulatorSpec& spec)
    : ItemResponseModel(spec),
      n_categories_(spec.n_categories),
      log_a_(spec.priors.log_a),
      thresholds_(spec.priors.thresholds) {
  if (n_categories_ < 2) throw std::invalid_argument("GradedResponseModel: needs at least 2 categories");
  prior_variance_ = torch::cat({torch::tensor({log_a_.sd * log_a_.sd}, torch::kFloat64),
                                sorted_normal_variances(n_categories_ - 1) * (thresholds_.sd * thresholds_.sd)});
}

torch::Tensor GradedResponseModel::draw_item_params(int64_t batch, int64_t items, at::Generator& generator) const {
  const auto log_a = normal(log_a_, {batch, items, 1}, generator);
  const auto thresholds = std::get<0>(normal(thresholds_, {batch, items, n_categories_ - 1}, generator).sort(-1));
  return torch::cat({log_a, thresholds}, -1);
}

// The K-1 sorted draws: (K-1)! times the product of the normal densities on b_1 < ... < b_{K-1}.
torch::Tensor GradedResponseModel::log_prior(const torch::Tensor& item_params) const {
  const auto thresholds = item_params.narrow(-1, 1, n_categories_ - 1);
  auto log_density = normal_log_density(log_a_, item_params.select(-1, 0)) +
                     normal_log_density(thresholds_, thresholds).sum(-1) + std::lgamma(double(n_categories_));
  if (n_categories_ > 2) {
    const auto ordered = (thresholds.narrow(-1, 1, n_categories_ - 2) > thresholds.narrow(-1, 0, n_categories_ - 2)).all(-1);
    log_density = log_density.masked_fill(ordered.logical_not(), -std::numeric_limits<double>::infinity());
  }
  return log_density;
}

torch::Tensor GradedResponseModel::exceedance_probabilities(const torch::Tensor& theta,
                                                            const torch::Tensor& item_params) const {
  const auto a = item_params.select(-1, 0).exp().unsqueeze(1).unsqueeze(-1);            // [B, 1, J, 1]
  const auto thresholds = item_params.narrow(-1, 1, n_categories_ - 1).unsqueeze(1);  // [B, 1, J, K-1]
  return torch::sigmoid(a * (theta.unsqueeze(2).unsqueeze(3) - thresholds));
}

}  // namespace bfhpo::models
