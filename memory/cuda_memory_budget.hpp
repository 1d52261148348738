// CudaMemoryBudget: makes a GPU behave as a smaller one, for real. While
// alive, PyTorch's caching allocator may reserve at most `bytes` on the
// device (its per-process memory fraction, bytes / device total); a request
// beyond it throws the allocator's own c10::OutOfMemoryError, exactly the
// error a full GPU gives. The CUDA counterpart of CpuMemoryBudget, used to
// drive the OOM ladder on a GPU. The destructor sets the fraction back to 1
// (libtorch 1.13 cannot read the fraction in force, so scopes do not nest).
// Reserved bytes count, cached ones included: empty the cache first for a
// budget on live tensors. Not CUDA (or no CUDA build): std::invalid_argument.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace bfhpo::memory {

class CudaMemoryBudget {
 public:
  CudaMemoryBudget(const torch::Device& device, int64_t bytes);
  ~CudaMemoryBudget();
  CudaMemoryBudget(const CudaMemoryBudget&) = delete;
  CudaMemoryBudget& operator=(const CudaMemoryBudget&) = delete;

 private:
  torch::Device device_;
};

}  // namespace bfhpo::memory
