#include "trials/device.hpp"

#include "common/user_error.hpp"

namespace bfhpo::trials {

torch::Device resolve_device(const std::string& device, const std::string& source) {
  if (device == "cpu") return torch::kCPU;
  if (torch::cuda::is_available()) return torch::kCUDA;
  if (device == "auto") return torch::kCPU;
  throw UserError::at(source, "training.device", "\"cuda\" asked but no CUDA device is available",
                      "use \"auto\" or \"cpu\"");
}

}  // namespace bfhpo::trials
