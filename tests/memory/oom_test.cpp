#include "memory/oom.hpp"

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <new>
#include <stdexcept>

using bfhpo::memory::is_oom_error;

namespace {

template <class Throw>
std::exception_ptr thrown(Throw throw_it) {
  try {
    throw_it();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// `outer` thrown with std::throw_with_nested while `inner` is being handled.
template <class Throw>
std::exception_ptr wrapped(Throw inner, const std::runtime_error& outer) {
  return thrown([&] {
    try {
      inner();
    } catch (...) {
      std::throw_with_nested(outer);
    }
  });
}

bool is_oom(const std::exception_ptr& error) {
  REQUIRE(error);
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return is_oom_error(e);
  }
}

}  // namespace

TEST_CASE("is_oom_error: CUDA, cuBLAS/cuDNN and CPU allocation failures") {
  CHECK(is_oom(thrown([] {
    C10_THROW_ERROR(OutOfMemoryError, "Tried to allocate 2.00 MiB (GPU 0; 79.15 GiB total)");
  })));
  CHECK(is_oom(thrown([] { throw std::bad_alloc(); })));
  CHECK(is_oom(thrown([] {
    TORCH_CHECK(false, "CUDA out of memory. Tried to allocate 20.00 MiB");
  })));
  CHECK(is_oom(thrown([] { throw std::runtime_error("CUDA error: out of memory"); })));
  CHECK(is_oom(thrown([] {
    TORCH_CHECK(false, "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`");
  })));
  CHECK(is_oom(thrown([] { TORCH_CHECK(false, "cuDNN error: CUDNN_STATUS_ALLOC_FAILED"); })));
  CHECK(is_oom(thrown([] {
    TORCH_CHECK(false, "DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes.");
  })));
}

TEST_CASE("is_oom_error: a real failed CPU allocation") {
  // 2^48 bytes: more than any machine's address space allows.
  const auto error = thrown([] { torch::empty({int64_t{1} << 46}, torch::kFloat); });
  CHECK(is_oom(error));
}

TEST_CASE("is_oom_error: ordinary errors are not OOM") {
  CHECK_FALSE(is_oom(thrown([] { TORCH_CHECK(false, "Expected 3 dims, got 2"); })));
  CHECK_FALSE(is_oom(thrown([] { throw std::runtime_error("loss is NaN"); })));
  CHECK_FALSE(is_oom(thrown([] { throw std::invalid_argument("batch_size must be positive"); })));
  CHECK_FALSE(is_oom(thrown([] { torch::matmul(torch::ones({2, 3}), torch::ones({4, 5})); })));
}

TEST_CASE("is_oom_error follows nested exception chains") {
  const auto oom = [] { C10_THROW_ERROR(OutOfMemoryError, "out of memory"); };
  CHECK(is_oom(wrapped(oom, std::runtime_error("trial 3 failed"))));
  CHECK(is_oom(wrapped([&] { std::rethrow_exception(wrapped(oom, std::runtime_error("epoch 2"))); },
                       std::runtime_error("trial 3 failed"))));
  CHECK_FALSE(is_oom(wrapped([] { throw std::runtime_error("shape"); },
                             std::runtime_error("trial 3 failed"))));
  CHECK_FALSE(is_oom(wrapped([] { throw 42; }, std::runtime_error("trial 3 failed"))));
}

TEST_CASE("safe_empty_cache never throws") {
  STATIC_REQUIRE(noexcept(bfhpo::memory::safe_empty_cache()));
  bfhpo::memory::safe_empty_cache();
}

TEST_CASE("oom_requested_bytes reads the failed allocation's size, also nested") {
  using bfhpo::memory::oom_requested_bytes;
  const auto bytes_of = [](const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return oom_requested_bytes(e);
    }
  };
  CHECK(bytes_of(thrown([] { throw std::runtime_error("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0)"); })) ==
        std::optional<int64_t>(20 * 1048576));
  CHECK(bytes_of(thrown([] { throw std::runtime_error("budget. Tried to allocate 8000 bytes (0.01 MiB)"); })) ==
        std::optional<int64_t>(8000));
  CHECK(bytes_of(wrapped([] { throw std::runtime_error("Tried to allocate 1.50 GiB"); },
                         std::runtime_error("step failed"))) == std::optional<int64_t>(1610612736));
  CHECK_FALSE(bytes_of(thrown([] { throw std::runtime_error("CUDA error: out of memory"); })));
}
