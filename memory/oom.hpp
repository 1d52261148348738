// Out-of-memory detection and cache release, the two primitives every OOM
// recovery path (probe, fit_with_oom_retry) is built on.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>

namespace bfhpo::memory {

// True when `error`, or any exception nested inside it (std::throw_with_nested
// chains, followed with std::rethrow_if_nested), reports that memory ran out:
//   - c10::OutOfMemoryError (CUDA's caching allocator, bfhpo's CPU budget);
//   - std::bad_alloc;
//   - a message of an allocation failure: "CUDA out of memory",
//     "CUDA error: out of memory", cuBLAS / cuDNN / cuSOLVER / cuFFT
//     allocation failures (CUBLAS_STATUS_ALLOC_FAILED, ...), and
//     "DefaultCPUAllocator: can't allocate memory" / "...: not enough memory",
//     and the CPU budget's own message (cpu_memory_tracking.hpp), so it is
//     still recognised if something rethrows it as a plain c10::Error.
// Everything else (shape errors, NaNs, I/O, ...) is false: those must not be
// retried with a smaller batch.
bool is_oom_error(const std::exception& error);

// The size of the allocation that failed, read from "Tried to allocate N
// bytes|KiB|MiB|GiB" in the message of `error` or a nested one (CUDA's
// caching allocator and the CPU budget both say it); none when not stated.
std::optional<int64_t> oom_requested_bytes(const std::exception& error);

// Returns the CUDA caching allocator's free cached blocks to the driver and the
// CPU tracking allocator's to the system (release_cpu_cache), so the next
// attempt after an OOM starts from live tensors only. Never throws.
void safe_empty_cache() noexcept;

}  // namespace bfhpo::memory
