#include "models/torchscript_module.hpp"

#include "models/networks/item_fit.hpp"

#include <torch/script.h>

#include <cmath>
#include <iomanip>
#include <sstream>

namespace bfhpo::models {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLogTwoPi = 1.8378770664093454836;

std::string attribute_name(const std::string& dotted) {
  std::string out;
  for (char c : dotted) out += c == '.' ? std::string("__") : std::string(1, c);
  return out;
}

// A double as a TorchScript float literal that reads back to the same double.
std::string literal(double value) {
  std::ostringstream out;
  out << std::setprecision(17) << value;
  std::string text = out.str();
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

const char* activation_op(Activation activation) {
  switch (activation) {
    case Activation::relu: return "torch.relu";
    case Activation::silu: return "torch.silu";
    case Activation::gelu: return "torch.gelu";
  }
  throw std::logic_error("unknown activation");
}

// The methods below mirror models/networks/*.cpp in eval mode, operation by operation.
class SourceWriter {
 public:
  explicit SourceWriter(const ApproximatorSpec& spec) : spec_(spec) {}

  std::string write() {
    const auto& s = spec_.summary;
    mlp_hidden("summary.phi", s.cell_mlp_depth + 1, s.activation);
    mlp("summary.global_mlp", 2, s.activation);
    for (int64_t i = 0; i < s.attention_layers; ++i) attention_block(i);
    if (s.item_fit) item_fit();
    condition();
    for (int64_t k = 0; k < spec_.flow.depth; ++k) {
      for (const char* subnet : {"subnet1", "subnet2"})
        if (spec_.param_dim > 1 || std::string(subnet) == "subnet1")  // one parameter: no subnet2
          mlp("flow.coupling" + std::to_string(k) + "." + subnet, spec_.flow.subnet_depth + 1, spec_.flow.activation);
      coupling(k);
    }
    flow();
    approximator();
    return out_.str();
  }

 private:
  std::string self(const std::string& dotted) const { return "self." + attribute_name(dotted); }

  void linear(const std::string& out, const std::string& in, const std::string& dotted) {
    out_ << "    " << out << " = torch.linear(" << in << ", " << self(dotted + ".weight") << ", "
         << self(dotted + ".bias") << ")\n";
  }

  // MlpImpl: Linear, activation between hidden layers (non-residual), the last layer linear.
  void mlp(const std::string& dotted, int64_t layers, Activation activation) {
    out_ << "def _mlp_" << attribute_name(dotted) << "(self, x: Tensor) -> Tensor:\n";
    for (int64_t i = 0; i < layers; ++i) {
      linear("x", "x", dotted + ".linear" + std::to_string(i));
      if (i + 1 < layers) out_ << "    x = " << activation_op(activation) << "(x)\n";
    }
    out_ << "    return x\n\n";
  }

  // MlpImpl::hidden: every layer but the last, each with its activation.
  void mlp_hidden(const std::string& dotted, int64_t layers, Activation activation) {
    out_ << "def _mlp_hidden_" << attribute_name(dotted) << "(self, x: Tensor) -> Tensor:\n";
    for (int64_t i = 0; i + 1 < layers; ++i) {
      linear("x", "x", dotted + ".linear" + std::to_string(i));
      out_ << "    x = " << activation_op(activation) << "(x)\n";
    }
    out_ << "    return x\n\n";
  }

  // SetAttentionBlockImpl with LibTorch's multi_head_attention_forward for self-attention.
  void attention_block(int64_t index) {
    const std::string block = "summary.attention_blocks." + std::to_string(index);
    const int64_t width = spec_.summary.embed_dim, heads = spec_.summary.attention_heads;
    const int64_t head_dim = width / heads;
    out_ << "def _attention_block" << index << "(self, x: Tensor) -> Tensor:\n"
         << "    seq = x.transpose(0, 1)\n"
         << "    tgt_len = seq.size(0)\n"
         << "    bsz = seq.size(1)\n";
    out_ << "    qkv = torch.linear(seq, " << self(block + ".attention.in_proj_weight") << ", "
         << self(block + ".attention.in_proj_bias") << ")\n";
    out_ << "    chunks = qkv.chunk(3, -1)\n"
         << "    q = chunks[0] * " << literal(1.0 / std::sqrt(static_cast<double>(head_dim))) << "\n"
         << "    q = q.contiguous().view(tgt_len, bsz * " << heads << ", " << head_dim << ").transpose(0, 1)\n"
         << "    k = chunks[1].contiguous().view(-1, bsz * " << heads << ", " << head_dim << ").transpose(0, 1)\n"
         << "    v = chunks[2].contiguous().view(-1, bsz * " << heads << ", " << head_dim << ").transpose(0, 1)\n"
         << "    weights = torch.softmax(torch.bmm(q, k.transpose(1, 2)), -1)\n"
         << "    attended = torch.bmm(weights, v).transpose(0, 1).contiguous().view(tgt_len, bsz, " << width << ")\n";
    linear("attended", "attended", block + ".attention.out_proj");
    out_ << "    h = torch.layer_norm(x + attended.transpose(0, 1), [" << width << "], "
         << self(block + ".norm_attention.weight") << ", " << self(block + ".norm_attention.bias") << ", 1e-05)\n"
         << "    f = self._mlp_" << attribute_name(block + ".feed_forward") << "(h)\n"
         << "    return torch.layer_norm(h + f, [" << width << "], " << self(block + ".norm_feed_forward.weight")
         << ", " << self(block + ".norm_feed_forward.bias") << ", 1e-05)\n\n";
    mlp(block + ".feed_forward", 2, spec_.summary.activation);
  }

  // fit_items (models/networks/item_fit.cpp): responses and mask [B, P, J] -> [B, J, K].
  void item_fit() {
    const int64_t k = spec_.n_categories, nodes = kItemFitNodes;
    const std::string ks = std::to_string(k), qs = std::to_string(nodes);
    out_ << "def _fit_items(self, responses: Tensor, mask: Tensor) -> Tensor:\n"
         << "    batch = responses.size(0)\n"
         << "    persons = responses.size(1)\n"
         << "    items = responses.size(2)\n"
         << "    observed = mask.float()\n"
         << "    category = (responses.float().unsqueeze(-1).eq(torch.arange(" << ks << ", device=responses.device)"
            ".float()) * observed.unsqueeze(-1)).reshape(batch, persons, items * " << ks << ")\n"
         << "    category_t = category.transpose(1, 2).contiguous()\n"
         << "    theta = (torch.arange(" << qs << ", device=responses.device).double() * "
         << literal(8.0 / static_cast<double>(nodes - 1)) << " - 4.0).view(1, 1, 1, " << qs << ")\n"
         << "    log_prior = torch.log_softmax(-0.5 * theta.square(), 3).view(1, 1, " << qs << ").float()\n"
         << "    count = category.sum(1).view(batch, items, " << ks << ").double()\n"
         << "    at_least = count.flip(-1).cumsum(-1).flip(-1)[:, :, 1:]\n"
         << "    share = (at_least + 0.5) / (count.sum(-1, True) + 1.0)\n"
         << "    slope = torch.ones_like(share[:, :, 0:1]).unsqueeze(-1)\n"
         << "    intercept = (" << literal(kItemFitInterceptFromShare) << " * torch.logit(share)).unsqueeze(-1)\n"
         << "    for _ in range(" << kItemFitIterations << "):\n"
         << "        p = torch.sigmoid(slope * theta + intercept)\n"
         << "        ones = torch.ones_like(p[:, :, 0:1])\n"
         << "        zeros = torch.zeros_like(ones)\n"
         << "        cumulative = torch.cat([ones, p, zeros], 2)\n"
         << "        pi = (cumulative[:, :, 0:" << k << "] - cumulative[:, :, 1:" << k + 1 << "]).clamp_min(1e-12)\n"
         << "        log_pi = pi.log().float().view(batch, items * " << ks << ", " << qs << ")\n"
         << "        weights = torch.softmax(torch.bmm(category, log_pi) + log_prior, 2)\n"
         << "        n = torch.bmm(category_t, weights).view(batch, items, " << ks << ", " << qs << ").double()\n"
         << "        f = p * (1.0 - p)\n"
         << "        f_padded = torch.cat([zeros, f, zeros], 2)\n"
         << "        a_shift = f_padded[:, :, 0:" << k << "] - f_padded[:, :, 1:" << k + 1 << "]\n"
         << "        ratio = n / pi\n"
         << "        inverse = n.sum(2, True) / pi\n"
         << "        grad_slope = (theta * (a_shift * ratio).sum(2, True)).sum(3) - "
         << literal(kItemFitRidgeSlope) << " * (slope.squeeze(-1) - 1.0)\n"
         << "        grad_intercept = (f * (ratio[:, :, 1:] - ratio[:, :, 0:" << k - 1 << "])).sum(3) - "
         << literal(kItemFitRidgeIntercept) << " * intercept.squeeze(-1)\n"
         << "        a_weighted = a_shift * inverse\n"
         << "        i_slope = (theta.square() * (a_shift * a_weighted).sum(2, True)).sum(3) + "
         << literal(kItemFitRidgeSlope) << "\n"
         << "        i_cross = (theta * f * (a_weighted[:, :, 1:] - a_weighted[:, :, 0:" << k - 1 << "])).sum(3)\n"
         << "        i_intercept = (f.square() * (inverse[:, :, 1:] + inverse[:, :, 0:" << k - 1 << "])).sum(3) + "
         << literal(kItemFitRidgeIntercept) << "\n"
         << "        i_neighbours = -(f[:, :, 0:" << k - 2 << "] * f[:, :, 1:] * inverse[:, :, 1:" << k - 1
         << "]).sum(3)\n"
         << "        i_intercepts = torch.diag_embed(i_intercept) + torch.diag_embed(i_neighbours, 1) + "
            "torch.diag_embed(i_neighbours, -1)\n"
         << "        information = torch.cat([torch.cat([i_slope.unsqueeze(-1), i_cross.unsqueeze(2)], -1), "
            "torch.cat([i_cross.unsqueeze(-1), i_intercepts], -1)], 2)\n"
         << "        gradient = torch.cat([grad_slope, grad_intercept], -1).unsqueeze(-1)\n"
         << "        step = torch.linalg_solve(information, gradient)\n"
         << "        slope = (slope + step[:, :, 0:1].clamp(-1.0, 1.0)).clamp(0.05, 8.0)\n"
         << "        intercept = torch.cummin((intercept + step[:, :, 1:].clamp(-2.0, 2.0)).clamp(-30.0, 30.0), 2)[0]\n"
         << "    difficulty = (-intercept / slope).clamp(-10.0, 10.0).squeeze(-1)\n"
         << "    return torch.cat([slope.log().squeeze(-1), difficulty], -1)\n\n";
  }

  // SummaryNetworkImpl::forward and SummaryOutput::per_item_condition, as flow rows [B*J, C].
  // A NaN response is a missing cell (the mask's 0).
  void condition() {
    const std::string steps = literal(static_cast<double>(spec_.n_categories - 1));
    out_ << "def condition(self, responses: Tensor) -> Tensor:\n"
         << "    dtype = " << self("summary.item_projection.weight") << ".dtype\n"
         << "    mask = (responses == responses).to(dtype)\n"
         << "    y = torch.nan_to_num(responses.to(dtype)) * mask\n"
         << (spec_.summary.item_fit ? "    fit = self._fit_items(y, mask).to(dtype)\n" : "")
         << "    person_count = mask.sum(2)\n"
         << "    person_sum = (y * mask).sum(2) / " << steps << "\n"
         << "    n_persons = float(y.size(1))\n"
         << "    n_items = float(y.size(2))\n"
         << "    y = y.transpose(1, 2).contiguous()\n"
         << "    mask = mask.transpose(1, 2).contiguous()\n"
         << "    answered = mask.sum(2, keepdim=True)\n"
         << "    n_answered = answered.clamp_min(1.0)\n"
         << "    scaled = y * mask / " << steps << "\n"
         << "    total = person_sum.unsqueeze(1)\n"
         << "    count = person_count.unsqueeze(1)\n"
         << "    score = total / count.clamp_min(1.0)\n"
         << "    p_value = scaled.sum(2, keepdim=True) / n_answered\n"
         << "    rest = (total - scaled) / (count - mask).clamp_min(1.0)\n"
         << "    rest_centred = (rest - (rest * mask).sum(2, keepdim=True) / n_answered) * mask\n"
         << "    rest_z = rest_centred / (rest_centred.square().sum(2, keepdim=True) / n_answered + 1e-4).sqrt()\n"
         << "    features: List[Tensor] = []\n";
    for (int64_t k = 1; k < spec_.n_categories; ++k)
      out_ << "    features.append(y.ge(" << k << ").to(dtype) * mask)\n";
    const std::string phi_out = "summary.phi.linear" + std::to_string(spec_.summary.cell_mlp_depth);
    out_ << "    features.append(score.expand_as(y))\n"
         << "    features.append(p_value.expand_as(y))\n"
         << "    features.append((scaled - score) * mask)\n"
         << "    features.append((count / n_items).expand_as(y))\n"
         << "    features.append((answered / n_persons).expand_as(y))\n"
         << "    features.append(rest_z)\n"
         << "    features.append((scaled - p_value) * rest_z)\n"
         << "    features.append((n_answered.log() / 6.907755278982137).expand_as(y))\n"
         << "    hidden = self._mlp_hidden_summary__phi(torch.stack(features, -1))\n"
         << "    pooled = torch.matmul(mask.unsqueeze(2), hidden).squeeze(2) / answered.clamp_min(1.0)\n"
         << "    pooled = torch.linear(pooled, " << self(phi_out + ".weight") << ") + " << self(phi_out + ".bias")
         << " * answered.clamp_max(1.0)\n";
    if (spec_.summary.item_fit) out_ << "    pooled = torch.cat([pooled, fit], -1)\n";
    linear("h", "pooled", "summary.item_projection");
    for (int64_t i = 0; i < spec_.summary.attention_layers; ++i)
      out_ << "    h = self._attention_block" << i << "(h)\n";
    out_ << "    g = self._mlp_summary__global_mlp(h.mean(1))\n"
         << "    c = torch.cat([h, g.unsqueeze(1).expand(g.size(0), h.size(1), g.size(1))"
         << (spec_.summary.item_fit ? ", fit" : "") << "], -1)\n"
         << "    return c.reshape(-1, c.size(-1))\n\n";
  }

  // DualAffineCouplingImpl.
  void coupling(int64_t k) {
    const std::string c = "flow.coupling" + std::to_string(k);
    const int64_t d = spec_.param_dim, first = d / 2;
    const std::string scale = literal(spec_.flow.clamp * 2.0 / kPi), clamp = literal(spec_.flow.clamp);
    for (int subnet = 1; subnet <= (first > 0 ? 2 : 1); ++subnet) {
      out_ << "def _scale_shift" << k << "_" << subnet
           << "(self, conditioner: Tensor, context: Tensor) -> Tuple[Tensor, Tensor]:\n"
           << "    out = self._mlp_" << attribute_name(c + ".subnet" + std::to_string(subnet))
           << "(torch.cat([conditioner, context], 1)).chunk(2, 1)\n"
           << "    return " << scale << " * torch.atan(out[0] / " << clamp << "), out[1]\n\n";
    }
    if (first == 0) {  // one parameter: scaled and shifted by subnet1(context) alone
      out_ << "def _coupling" << k << "_forward(self, x: Tensor, context: Tensor) -> Tuple[Tensor, Tensor]:\n"
           << "    s1, t1 = self._scale_shift" << k << "_1(x.narrow(1, 0, 0), context)\n"
           << "    return x * s1.exp() + t1, s1.sum(1)\n\n"
           << "def _coupling" << k << "_inverse(self, y: Tensor, context: Tensor) -> Tensor:\n"
           << "    s1, t1 = self._scale_shift" << k << "_1(y.narrow(1, 0, 0), context)\n"
           << "    return (y - t1) * (-s1).exp()\n\n";
      return;
    }
    out_ << "def _coupling" << k << "_forward(self, x: Tensor, context: Tensor) -> Tuple[Tensor, Tensor]:\n"
         << "    x1 = x.narrow(1, 0, " << first << ")\n"
         << "    x2 = x.narrow(1, " << first << ", " << d - first << ")\n"
         << "    s1, t1 = self._scale_shift" << k << "_1(x1, context)\n"
         << "    y2 = x2 * s1.exp() + t1\n"
         << "    s2, t2 = self._scale_shift" << k << "_2(y2, context)\n"
         << "    y1 = x1 * s2.exp() + t2\n"
         << "    return torch.cat([y1, y2], 1), s1.sum(1) + s2.sum(1)\n\n"
         << "def _coupling" << k << "_inverse(self, y: Tensor, context: Tensor) -> Tensor:\n"
         << "    y1 = y.narrow(1, 0, " << first << ")\n"
         << "    y2 = y.narrow(1, " << first << ", " << d - first << ")\n"
         << "    s2, t2 = self._scale_shift" << k << "_2(y2, context)\n"
         << "    x1 = (y1 - t2) * (-s2).exp()\n"
         << "    s1, t1 = self._scale_shift" << k << "_1(x1, context)\n"
         << "    x2 = (y2 - t1) * (-s1).exp()\n"
         << "    return torch.cat([x1, x2], 1)\n\n";
  }

  // CouplingFlowImpl: actnorm, permutation, coupling per layer.
  void flow() {
    out_ << "def flow_forward(self, theta: Tensor, context: Tensor) -> Tuple[Tensor, Tensor]:\n"
         << "    x = theta\n"
         << "    log_det = torch.zeros([theta.size(0)], dtype=theta.dtype, device=theta.device)\n";
    for (int64_t k = 0; k < spec_.flow.depth; ++k) {
      const std::string a = "flow.actnorm" + std::to_string(k), id = std::to_string(k);
      out_ << "    normed = x * " << self(a + ".log_scale") << ".exp() + " << self(a + ".shift") << "\n"
           << "    coupled, coupling_log_det = self._coupling" << id << "_forward(normed.index_select(1, "
           << self("flow.permutation" + id) << "), context)\n"
           << "    x = coupled\n"
           << "    log_det = log_det + " << self(a + ".log_scale") << ".sum() + coupling_log_det\n";
    }
    out_ << "    return x, log_det\n\n"
         << "def flow_inverse(self, z: Tensor, context: Tensor) -> Tensor:\n"
         << "    x = z\n";
    for (int64_t k = spec_.flow.depth; k-- > 0;) {
      const std::string a = "flow.actnorm" + std::to_string(k), id = std::to_string(k);
      out_ << "    unpermuted = self._coupling" << id << "_inverse(x, context).index_select(1, "
           << self("flow.inverse_permutation" + id) << ")\n"
           << "    x = (unpermuted - " << self(a + ".shift") << ") * (-" << self(a + ".log_scale") << ").exp()\n";
    }
    out_ << "    return x\n\n";
  }

  // ContinuousApproximatorImpl::log_prob and ::sample; standardization__std is RunningStandardization::std().
  void approximator() {
    const int64_t d = spec_.param_dim;
    out_ << "def log_prob(self, theta: Tensor, responses: Tensor) -> Tensor:\n"
         << "    batched = responses.dim() == 3\n"
         << "    if not batched:\n"
         << "        responses = responses.unsqueeze(0)\n"
         << "        theta = theta.unsqueeze(0)\n"
         << "    context = self.condition(responses)\n"
         << "    if theta.dim() == 4:\n"
         << "        context = torch.repeat_interleave(context, theta.size(2), 0)\n"
         << "    rows = (theta.reshape(-1, " << d << ").to(context.dtype) - self.standardization__mean) / "
            "self.standardization__std\n"
         << "    z, log_det = self.flow_forward(rows, context)\n"
         << "    log_q = -0.5 * z.pow(2).sum(1) - " << literal(0.5 * static_cast<double>(d) * kLogTwoPi)
         << " + log_det\n"
         << "    log_q = log_q + -self.standardization__std.log().sum()\n"
         << "    log_q = log_q.reshape(theta.size()[:-1])\n"
         << "    return log_q if batched else log_q.squeeze(0)\n\n"
         << "def sample(self, responses: Tensor, n: int) -> Tensor:\n"
         << "    batched = responses.dim() == 3\n"
         << "    if not batched:\n"
         << "        responses = responses.unsqueeze(0)\n"
         << "    context = self.condition(responses)\n"
         << "    rows = context.size(0)\n"
         << "    repeated = torch.repeat_interleave(context, n, 0)\n"
         << "    z = torch.randn([rows * n, " << d << "], dtype=context.dtype, device=context.device)\n"
         << "    theta = self.flow_inverse(z, repeated).reshape(rows, n, " << d << ")\n"
         << "    draws = (theta * self.standardization__std + self.standardization__mean).reshape("
            "responses.size(0), responses.size(2), n, " << d << ")\n"
         << "    return draws if batched else draws.squeeze(0)\n";
  }

  const ApproximatorSpec& spec_;
  std::ostringstream out_;
};

}  // namespace

std::string torchscript_source(const ApproximatorSpec& spec) { return SourceWriter(spec).write(); }

void save_torchscript(ContinuousApproximatorImpl& approximator, const std::vector<std::string>& parameter_names,
                      std::ostream& out) {
  torch::NoGradGuard no_grad;
  torch::jit::Module module(c10::QualifiedName("__torch__.bfhpo.PosteriorEstimator"));
  for (const auto& p : approximator.named_parameters()) {
    if (!p.value().defined()) continue;  // MultiheadAttention's unused separate projections
    module.register_parameter(attribute_name(p.key()), p.value().detach().to(torch::kCPU), /*is_buffer=*/false);
  }
  for (const auto& b : approximator.named_buffers()) {
    if (!b.value().defined()) continue;
    auto value = b.value().detach().to(torch::kCPU);
    // Module::to(dtype) casts the permutations too; index_select needs int64.
    if (b.key().find("permutation") != std::string::npos) value = value.to(torch::kLong);
    module.register_buffer(attribute_name(b.key()), value);
  }
  module.register_buffer("standardization__std", approximator.standardization()->std().detach().to(torch::kCPU));
  c10::List<std::string> names;
  for (const auto& name : parameter_names) names.push_back(name);
  module.register_attribute("parameter_names", c10::ListType::ofStrings(), names);
  module.register_attribute("spec", c10::StringType::get(), to_json(approximator.spec()).dump());
  module.define(torchscript_source(approximator.spec()));
  module.save(out);
}

}  // namespace bfhpo::models
