#include "memory/oom.hpp"

#include "memory/cpu_memory_tracking.hpp"

#include <c10/util/Exception.h>

#if defined(BFHPO_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>
#define BFHPO_MEMORY_HAS_CUDA 1
#endif

#include <cstring>
#include <regex>
#include <string>
#include <new>

namespace bfhpo::memory {
namespace {

// Substrings of what() that only allocation failures produce.
constexpr const char* kOomMessages[] = {
    "CUDA out of memory",
    "CUDA error: out of memory",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "CUSOLVER_STATUS_ALLOC_FAILED",
    "CUFFT_ALLOC_FAILED",
    "DefaultCPUAllocator: can't allocate memory",
    "DefaultCPUAllocator: not enough memory",
    "out of memory (bfhpo CPU memory budget)",
};

bool is_oom_here(const std::exception& error) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr ||
      dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return true;
  }
  const char* what = error.what();
  if (what == nullptr) return false;
  for (const char* message : kOomMessages) {
    if (std::strstr(what, message) != nullptr) return true;
  }
  return false;
}

}  // namespace

bool is_oom_error(const std::exception& error) {
  if (is_oom_here(error)) return true;
  try {
    std::rethrow_if_nested(error);
  } catch (const std::exception& nested) {
    return is_oom_error(nested);
  } catch (...) {
    return false;
  }
  return false;
}

std::optional<int64_t> oom_requested_bytes(const std::exception& error) {
  static const std::regex tried(R"(Tried to allocate ([0-9]+(?:\.[0-9]+)?) ?(bytes|KiB|MiB|GiB|B))");
  std::cmatch match;
  if (std::regex_search(error.what(), match, tried)) {
    const std::string unit = match[2];
    const double scale = unit == "KiB" ? 1024.0 : unit == "MiB" ? 1048576.0 : unit == "GiB" ? 1073741824.0 : 1.0;
    return static_cast<int64_t>(std::stod(match[1]) * scale);
  }
  try {
    std::rethrow_if_nested(error);
  } catch (const std::exception& nested) {
    return oom_requested_bytes(nested);
  } catch (...) {
  }
  return std::nullopt;
}

void safe_empty_cache() noexcept {
  release_cpu_cache();
#ifdef BFHPO_MEMORY_HAS_CUDA
  try {
    if (torch::cuda::is_available()) c10::cuda::CUDACachingAllocator::emptyCache();
  } catch (...) {
    // Releasing a cache is best effort; the caller is already handling an error.
  }
#endif
}

}  // namespace bfhpo::memory
