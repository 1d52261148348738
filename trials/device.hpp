// The device a training run uses, from the configuration's "training.device"
// ("auto": CUDA when available, else CPU; "cpu"; "cuda": an error naming
// `source` when no CUDA device is available). `device` is one of the names
// the config reader accepts (trial_config.cpp checks them).
#pragma once

#include <torch/torch.h>

#include <string>

namespace bfhpo::trials {

torch::Device resolve_device(const std::string& device, const std::string& source);

}  // namespace bfhpo::trials
