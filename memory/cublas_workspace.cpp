#include "memory/cublas_workspace.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

namespace bfhpo::memory {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kHopperAndLaterBytes = 4096 * 8 * kKiB;            // 32 MiB
constexpr int64_t kEarlierBytes = 4096 * kKiB * 2 + 16 * kKiB * 8;   // ":4096:2:16:8"
constexpr int64_t kCublasLtDefaultKiB = 1024;

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

int64_t default_cublas_bytes(std::optional<int> major) {
  if (!major) return kHopperAndLaterBytes;
  return *major >= 9 && *major <= 12 ? kHopperAndLaterBytes : kEarlierBytes;
}

// c10::utils::check_env's false spellings; anything else keeps the default (unified).
bool is_false(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::toupper(c); });
  return value == "0" || value == "OFF" || value == "NO" || value == "FALSE" || value == "N";
}

}  // namespace

CublasEnvironment CublasEnvironment::read() {
  return {environment("CUBLAS_WORKSPACE_CONFIG"), environment("CUBLASLT_WORKSPACE_SIZE"),
          environment("TORCH_CUBLASLT_UNIFIED_WORKSPACE")};
}

CublasWorkspace cublas_workspace(std::optional<int> compute_capability_major, const CublasEnvironment& environment) {
  CublasWorkspace w;
  w.cublas_bytes = default_cublas_bytes(compute_capability_major);
  if (environment.workspace_config) {
    static const std::regex pair(":([0-9]+):([0-9]+)");
    const std::string& text = *environment.workspace_config;
    int64_t total = 0;
    bool any = false;
    for (std::sregex_iterator it(text.begin(), text.end(), pair), end; it != end; ++it) {
      total += std::stoll((*it)[1].str()) * kKiB * std::stoll((*it)[2].str());
      any = true;
    }
    if (any) {
      w.cublas_bytes = total;
    } else {
      w.warnings.push_back("CUBLAS_WORKSPACE_CONFIG='" + text +
                           "' has no ':SIZE:COUNT' pair; PyTorch and the estimate use the default workspace");
    }
  }
  if (environment.lt_unified && is_false(*environment.lt_unified)) {
    int64_t kib = kCublasLtDefaultKiB;
    if (environment.lt_workspace_size) {
      char* end = nullptr;
      const long long parsed = std::strtoll(environment.lt_workspace_size->c_str(), &end, 10);
      if (end != environment.lt_workspace_size->c_str() && parsed >= 0) {
        kib = parsed;
      } else {
        w.warnings.push_back("CUBLASLT_WORKSPACE_SIZE='" + *environment.lt_workspace_size +
                             "' is not a number of KiB; PyTorch and the estimate use 1024");
      }
    }
    w.cublaslt_bytes = kib * kKiB;
  }
  return w;
}

}  // namespace bfhpo::memory
