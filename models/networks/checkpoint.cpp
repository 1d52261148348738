#include "models/networks/checkpoint.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

namespace bfhpo::models {
namespace {

// The states of the default generators of the CPU and of every CUDA device the
// tensors live on. Querying the CUDA generator only for CUDA tensors keeps this
// usable with a CPU-only libtorch.
class RngSnapshot {
 public:
  static RngSnapshot capture(const std::vector<torch::Tensor>& tensors) {
    std::set<c10::DeviceIndex> cuda_devices;
    for (const auto& t : tensors) {
      if (t.defined() && t.is_cuda()) cuda_devices.insert(t.device().index());
    }
    RngSnapshot snapshot;
    snapshot.add(torch::Device(torch::kCPU));
    for (auto index : cuda_devices) snapshot.add(torch::Device(torch::kCUDA, index));
    return snapshot;
  }

  void restore() {
    for (auto& [generator, state] : states_) {
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(state);
    }
  }

 private:
  void add(torch::Device device) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    states_.emplace_back(generator, generator.get_state());
  }

  std::vector<std::pair<at::Generator, torch::Tensor>> states_;
};

// Puts the caller's RNG state back when the recomputation ends, also on a throw.
class RngStateGuard {
 public:
  RngStateGuard(RngSnapshot& forward_state, const std::vector<torch::Tensor>& tensors)
      : caller_(RngSnapshot::capture(tensors)) {
    forward_state.restore();
  }
  ~RngStateGuard() { caller_.restore(); }
  RngStateGuard(const RngStateGuard&) = delete;
  RngStateGuard& operator=(const RngStateGuard&) = delete;

 private:
  RngSnapshot caller_;
};

// What backward needs besides the saved tensors; travels in the context's
// saved_data as an IValue capsule.
struct CheckpointState : torch::CustomClassHolder {
  CheckpointState(CheckpointedFn f, size_t inputs) : fn(std::move(f)), n_inputs(inputs) {}
  CheckpointedFn fn;
  size_t n_inputs;
  RngSnapshot rng;
};

// apply(state, inputs ++ params): the capsule is a non-tensor argument, the
// tensors one TensorList so that each gets its own gradient slot.
class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx,
                               c10::intrusive_ptr<CheckpointState> state,
                               torch::TensorList tensors) {
    std::vector<torch::Tensor> all = tensors.vec();
    state->rng = RngSnapshot::capture(all);
    torch::Tensor output;
    {
      torch::NoGradGuard no_grad;
      output = state->fn({all.begin(), all.begin() + static_cast<std::ptrdiff_t>(state->n_inputs)});
    }
    ctx->save_for_backward(all);
    ctx->saved_data["state"] = c10::IValue::make_capsule(std::move(state));
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto capsule = ctx->saved_data.at("state").toCapsule();
    auto& state = static_cast<CheckpointState&>(*capsule);
    const auto saved = ctx->get_saved_variables();

    std::vector<torch::Tensor> inputs;
    std::vector<torch::Tensor> targets;
    std::vector<size_t> target_slots;
    for (size_t i = 0; i < saved.size(); ++i) {
      torch::Tensor t = saved[i];
      if (i < state.n_inputs) {
        if (t.defined()) t = t.detach().requires_grad_(saved[i].requires_grad());
        inputs.push_back(t);
      }
      if (t.defined() && t.requires_grad()) {
        targets.push_back(t);
        target_slots.push_back(i);
      }
    }

    // Slot 0 is the capsule, which has no gradient.
    torch::autograd::variable_list grads(saved.size() + 1);
    if (targets.empty()) return grads;

    torch::Tensor output;
    {
      RngStateGuard rng(state.rng, saved);
      torch::AutoGradMode enable_grad(true);
      output = state.fn(inputs);
    }
    if (!output.requires_grad()) return grads;
    const auto target_grads = torch::autograd::grad({output}, targets, {grad_outputs[0]},
                                                    /*retain_graph=*/false,
                                                    /*create_graph=*/false,
                                                    /*allow_unused=*/true);
    for (size_t k = 0; k < targets.size(); ++k) grads[target_slots[k] + 1] = target_grads[k];
    return grads;
  }
};

}  // namespace

torch::Tensor checkpoint(CheckpointedFn fn, const std::vector<torch::Tensor>& inputs,
                         const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> all = inputs;
  all.insert(all.end(), params.begin(), params.end());
  const auto requires_grad = [](const torch::Tensor& t) { return t.defined() && t.requires_grad(); };
  const bool builds_graph =
      torch::GradMode::is_enabled() && std::any_of(all.begin(), all.end(), requires_grad);
  if (!builds_graph) return fn(inputs);
  auto state = c10::make_intrusive<CheckpointState>(std::move(fn), inputs.size());
  return CheckpointFunction::apply(std::move(state), torch::TensorList(all));
}

}  // namespace bfhpo::models
