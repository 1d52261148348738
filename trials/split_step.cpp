#include "trials/split_step.hpp"

#include "trials/training_threads.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace bfhpo::trials {
namespace {

// Holds the standardization while it lives.
class HeldStandardization {
 public:
  explicit HeldStandardization(models::ContinuousApproximatorImpl& approximator) : approximator_(approximator) {
    approximator_.hold_standardization(true);
  }
  ~HeldStandardization() { approximator_.hold_standardization(false); }
  HeldStandardization(const HeldStandardization&) = delete;
  HeldStandardization& operator=(const HeldStandardization&) = delete;

 private:
  models::ContinuousApproximatorImpl& approximator_;
};

}  // namespace

int64_t step_parts(const models::ContinuousApproximatorImpl& approximator, int64_t batch_size, int threads,
                   const torch::Device& device) {
  if (!device.is_cpu() || threads < 2 || batch_size < 2 || !approximator.loss_splits_by_data_set()) return 1;
  return std::min<int64_t>(threads, batch_size);
}

double split_loss_backward(models::ContinuousApproximatorImpl& approximator, const models::SimulatedBatch& batch,
                           int64_t parts) {
  const int64_t batch_size = batch.responses.size(0);
  if (parts < 2 || parts > batch_size) throw std::invalid_argument("split_loss_backward: parts must be in [2, B]");
  approximator.update_standardization(batch.item_params);
  const HeldStandardization held(approximator);
  const SingleThreadedKernels single_threaded;
  const auto parameters = approximator.parameters();
  std::vector<double> losses(static_cast<size_t>(parts));
  std::vector<torch::autograd::variable_list> gradients(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  const auto run_part = [&](int64_t part) {
    try {
      const int64_t begin = part * batch_size / parts, end = (part + 1) * batch_size / parts;
      const double share = static_cast<double>(end - begin) / static_cast<double>(batch_size);
      const auto mask = batch.mask.defined() ? batch.mask.slice(0, begin, end) : torch::Tensor();
      const auto terms = approximator.loss(batch.responses.slice(0, begin, end),
                                           batch.item_params.slice(0, begin, end), mask);
      losses[static_cast<size_t>(part)] = share * terms.total.item<double>();
      gradients[static_cast<size_t>(part)] =
          torch::autograd::grad({terms.total * share}, parameters, {}, /*retain_graph=*/false,
                                /*create_graph=*/false, /*allow_unused=*/true);
    } catch (...) {
      errors[static_cast<size_t>(part)] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (int64_t part = 1; part < parts; ++part) workers.emplace_back(run_part, part);
  run_part(0);
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);

  torch::NoGradGuard no_grad;
  double loss = 0.0;
  for (const double part_loss : losses) loss += part_loss;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor sum;
    for (const auto& part : gradients) {
      if (!part[i].defined()) continue;
      sum = sum.defined() ? sum + part[i] : part[i];
    }
    if (!sum.defined()) continue;
    auto& grad = parameters[i].mutable_grad();
    grad = grad.defined() ? grad + sum : sum;
  }
  return loss;
}

}  // namespace bfhpo::trials
