// The cuBLAS workspaces libtorch 2.x (>= 2.7) allocates from the CUDA caching
// allocator and keeps for the life of the process: one per cuBLAS handle and
// stream (aten/src/ATen/cuda/CublasHandlePool.cpp). A training step uses two
// handles: its own thread's for the forward pass and that of autograd's
// worker thread for the device in backward; both sit on the default stream.
//
// Size of one workspace (getChosenWorkspaceSize):
//   CUBLAS_WORKSPACE_CONFIG unset: 32 MiB on compute capability 9.x-12.x
//     (Hopper, Blackwell), else ":4096:2:16:8" = 8 MiB + 128 KiB;
//   set: the sum of SIZE KiB x COUNT over every ":SIZE:COUNT" in it; text
//     with no such pair falls back to the default (PyTorch warns; so do we).
// cuBLASLt (addmm with a bias runs through it) shares that workspace by
// default (TORCH_CUBLASLT_UNIFIED_WORKSPACE unset or true); set to false it
// takes its own CUBLASLT_WORKSPACE_SIZE KiB (default 1024) per handle.
// Libtorch 1.13 has no CUDA build here; the model is that of 2.x, and
// scripts/gpu-check measures it (the allocated bytes the first forward and
// backward through a Linear add).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::memory {

// cuBLAS handles (each with its workspace) one training step uses.
inline constexpr int kCublasHandlesPerStep = 2;

// The environment variables that size the workspaces; nullopt: unset.
struct CublasEnvironment {
  std::optional<std::string> workspace_config;     // CUBLAS_WORKSPACE_CONFIG
  std::optional<std::string> lt_workspace_size;    // CUBLASLT_WORKSPACE_SIZE (KiB)
  std::optional<std::string> lt_unified;           // TORCH_CUBLASLT_UNIFIED_WORKSPACE

  static CublasEnvironment read();
};

struct CublasWorkspace {
  int64_t cublas_bytes = 0;    // one handle's cuBLAS workspace
  int64_t cublaslt_bytes = 0;  // one handle's separate cuBLASLt workspace (0: shared)
  std::vector<std::string> warnings;

  // What kCublasHandlesPerStep handles hold together.
  int64_t step_bytes() const { return kCublasHandlesPerStep * (cublas_bytes + cublaslt_bytes); }
};

// The workspaces on a GPU of this compute capability (major version; use
// std::nullopt when unknown: the larger default is assumed).
CublasWorkspace cublas_workspace(std::optional<int> compute_capability_major, const CublasEnvironment& environment);

}  // namespace bfhpo::memory
