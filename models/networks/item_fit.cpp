#include "models/networks/item_fit.hpp"

namespace bfhpo::models {

torch::Tensor fit_items(const torch::Tensor& responses, const torch::Tensor& mask, int64_t n_categories) {
  torch::NoGradGuard no_grad;
  const int64_t batch = responses.size(0), persons = responses.size(1), items = responses.size(2);
  const int64_t k = n_categories, nodes = kItemFitNodes;
  const auto on_device = torch::TensorOptions().device(responses.device());
  // The answered category one-hot, items and categories before persons [B, J*K, P], in float32: the two
  // products over persons sum at most a few thousand terms of one sign each.
  const auto observed = mask.to(torch::kFloat32);
  const auto category_t = (responses.to(torch::kFloat32).transpose(1, 2).unsqueeze(2).eq(
                               torch::arange(k, on_device).to(torch::kFloat32).view({1, 1, k, 1})) *
                           observed.transpose(1, 2).unsqueeze(2))
                              .reshape({batch, items * k, persons});
  const auto theta =
      (torch::arange(nodes, on_device).to(torch::kFloat64) * (8.0 / static_cast<double>(nodes - 1)) - 4.0)
          .view({1, 1, 1, nodes});
  const auto log_prior = torch::log_softmax(-0.5 * theta.square(), 3).view({1, nodes, 1}).to(torch::kFloat32);

  // Start: a = 1 and each intercept from the share of answers in its category or above.
  const auto count = category_t.sum(2).view({batch, items, k}).to(torch::kFloat64);
  const auto at_least = count.flip(-1).cumsum(-1).flip(-1).slice(-1, 1);
  const auto share = (at_least + 0.5) / (count.sum(-1, true) + 1.0);
  auto slope = torch::ones_like(share.slice(-1, 0, 1)).unsqueeze(-1);                 // [B, J, 1, 1]
  auto intercept = (kItemFitInterceptFromShare * torch::logit(share)).unsqueeze(-1);  // [B, J, K-1, 1]
  for (int64_t round = 0; round < kItemFitIterations; ++round) {
    // P(y >= k) [B, J, K-1, Q] and P(y = k) [B, J, K, Q] at the nodes.
    const auto p = torch::sigmoid(slope * theta + intercept);
    const auto ones = torch::ones_like(p.slice(2, 0, 1)), zeros = torch::zeros_like(ones);
    const auto cumulative = torch::cat({ones, p, zeros}, 2);
    const auto pi = (cumulative.slice(2, 0, k) - cumulative.slice(2, 1, k + 1)).clamp_min(1e-12);
    // E-step: each person's weights over the nodes, nodes before persons [B, Q, P] (products and a softmax
    // along the long dimension, where the BLAS and the vectorized softmax are fastest); the expected persons
    // per item, category and node.
    const auto log_pi_t = pi.log().to(torch::kFloat32).view({batch, items * k, nodes}).transpose(1, 2);
    const auto weights_t = torch::softmax(torch::bmm(log_pi_t, category_t) + log_prior, 1);
    const auto n =
        torch::bmm(category_t, weights_t.transpose(1, 2)).view({batch, items, k, nodes}).to(torch::kFloat64);
    // M-step: one Fisher scoring step on (a, d_1..d_{K-1}) of the expected log-likelihood sum n log pi, with the
    // ridge. d_k moves pi_{k-1} and pi_k by -+f_k (f = p (1 - p)); a moves pi_c by theta (f_c - f_{c+1}).
    const auto f = p * (1.0 - p);
    const auto f_padded = torch::cat({zeros, f, zeros}, 2);
    const auto a_shift = f_padded.slice(2, 0, k) - f_padded.slice(2, 1, k + 1);  // [B, J, K, Q]
    const auto ratio = n / pi, inverse = n.sum(2, true) / pi;
    const auto upper = [](const torch::Tensor& t) { return t.slice(2, 1); };
    const auto lower = [k](const torch::Tensor& t) { return t.slice(2, 0, k - 1); };
    const auto grad_slope =
        (theta * (a_shift * ratio).sum(2, true)).sum(3) - kItemFitRidgeSlope * (slope.squeeze(-1) - 1.0);
    const auto grad_intercept =
        (f * (upper(ratio) - lower(ratio))).sum(3) - kItemFitRidgeIntercept * intercept.squeeze(-1);
    const auto a_weighted = a_shift * inverse;
    const auto i_slope =
        (theta.square() * (a_shift * a_weighted).sum(2, true)).sum(3) + kItemFitRidgeSlope;  // [B, J, 1]
    const auto i_cross = (theta * f * (upper(a_weighted) - lower(a_weighted))).sum(3);       // [B, J, K-1]
    const auto i_intercept = (f.square() * (upper(inverse) + lower(inverse))).sum(3) + kItemFitRidgeIntercept;
    const auto i_neighbours = -(f.slice(2, 0, k - 2) * f.slice(2, 1) * inverse.slice(2, 1, k - 1)).sum(3);
    const auto i_intercepts =
        torch::diag_embed(i_intercept) + torch::diag_embed(i_neighbours, 1) + torch::diag_embed(i_neighbours, -1);
    const auto information = torch::cat({torch::cat({i_slope.unsqueeze(-1), i_cross.unsqueeze(2)}, -1),
                                         torch::cat({i_cross.unsqueeze(-1), i_intercepts}, -1)},
                                        2);  // [B, J, K, K]
    const auto step = torch::linalg_solve(information, torch::cat({grad_slope, grad_intercept}, -1).unsqueeze(-1));
    slope = (slope + step.slice(2, 0, 1).clamp(-1.0, 1.0)).clamp(0.05, 8.0);
    intercept = std::get<0>(torch::cummin((intercept + step.slice(2, 1).clamp(-2.0, 2.0)).clamp(-30.0, 30.0), 2));
  }
  const auto difficulty = (-intercept / slope).clamp(-10.0, 10.0).squeeze(-1);  // [B, J, K-1]
  return torch::cat({slope.log().squeeze(-1), difficulty}, -1).to(responses.dtype());
}

}  // namespace bfhpo::models
