#include "memory/cublas_workspace.hpp"

#include <catch2/catch.hpp>

using namespace bfhpo::memory;

namespace {
constexpr int64_t KiB = 1024;
constexpr int64_t MiB = KiB * KiB;
}  // namespace

TEST_CASE("cuBLAS workspace by compute capability, no environment") {
  const CublasEnvironment none;
  CHECK(cublas_workspace(9, none).cublas_bytes == 32 * MiB);   // Hopper (H100, H200)
  CHECK(cublas_workspace(10, none).cublas_bytes == 32 * MiB);  // Blackwell
  CHECK(cublas_workspace(12, none).cublas_bytes == 32 * MiB);
  CHECK(cublas_workspace(8, none).cublas_bytes == 8 * MiB + 128 * KiB);  // Ampere: ":4096:2:16:8"
  CHECK(cublas_workspace(7, none).cublas_bytes == 8 * MiB + 128 * KiB);
  CHECK(cublas_workspace(std::nullopt, none).cublas_bytes == 32 * MiB);  // unknown: the larger
  const CublasWorkspace hopper = cublas_workspace(9, none);
  CHECK(hopper.cublaslt_bytes == 0);  // cuBLASLt shares it
  CHECK(hopper.step_bytes() == kCublasHandlesPerStep * 32 * MiB);
  CHECK(hopper.warnings.empty());
}

TEST_CASE("CUBLAS_WORKSPACE_CONFIG: the sum of SIZE KiB x COUNT over every pair") {
  CublasEnvironment env;
  env.workspace_config = ":4096:8";
  CHECK(cublas_workspace(8, env).cublas_bytes == 32 * MiB);
  env.workspace_config = ":16:8";  // the deterministic-algorithms setting
  CHECK(cublas_workspace(9, env).cublas_bytes == 128 * KiB);
  env.workspace_config = ":4096:2:16:8";
  CHECK(cublas_workspace(9, env).cublas_bytes == 8 * MiB + 128 * KiB);
  env.workspace_config = ":0:0";
  CHECK(cublas_workspace(9, env).cublas_bytes == 0);
  CHECK(cublas_workspace(9, env).warnings.empty());
}

TEST_CASE("CUBLAS_WORKSPACE_CONFIG without a pair falls back to the default with a warning") {
  CublasEnvironment env;
  env.workspace_config = "4096";
  const CublasWorkspace w = cublas_workspace(8, env);
  CHECK(w.cublas_bytes == 8 * MiB + 128 * KiB);
  REQUIRE(w.warnings.size() == 1);
  CHECK_THAT(w.warnings[0], Catch::Contains("CUBLAS_WORKSPACE_CONFIG"));
}

TEST_CASE("cuBLASLt takes its own workspace only when unification is switched off") {
  CublasEnvironment env;
  env.lt_workspace_size = "4096";
  CHECK(cublas_workspace(9, env).cublaslt_bytes == 0);  // unified by default: the size is ignored
  for (const char* off : {"0", "false", "OFF", "no"}) {
    env.lt_unified = off;
    CHECK(cublas_workspace(9, env).cublaslt_bytes == 4 * MiB);
  }
  env.lt_unified = "1";
  CHECK(cublas_workspace(9, env).cublaslt_bytes == 0);
  env.lt_unified = "0";
  env.lt_workspace_size.reset();
  const CublasWorkspace own = cublas_workspace(9, env);
  CHECK(own.cublaslt_bytes == MiB);  // CUBLASLT_WORKSPACE_SIZE's default, 1024 KiB
  CHECK(own.step_bytes() == kCublasHandlesPerStep * (32 * MiB + MiB));
  env.lt_workspace_size = "lots";
  const CublasWorkspace bad = cublas_workspace(9, env);
  CHECK(bad.cublaslt_bytes == MiB);
  CHECK(bad.warnings.size() == 1);
}
