#include "memory/device_profile.hpp"
#include "memory/meter.hpp"

#include <catch2/catch.hpp>
#include <torch/torch.h>

using namespace bfhpo::memory;

namespace {
constexpr int64_t MiB = int64_t{1} << 20;
}

TEST_CASE("CPU profile: allocations cost exactly their bytes") {
  const DeviceProfile cpu = device_profile(torch::kCPU);
  CHECK(cpu.kind == DeviceKind::cpu);
  CHECK(cpu.total_bytes == device_total_bytes(torch::kCPU));
  CHECK(cpu.usable_bytes() == cpu.total_bytes);
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{513}, 3 * MiB + 7, 123 * MiB}) {
    CHECK(device_allocation_bytes(cpu, bytes) == bytes);
    CHECK(device_segment_bytes(cpu, bytes) == bytes);
  }
}

TEST_CASE("CUDA profile: caching allocator block sizes") {
  const DeviceProfile cuda = cuda_device_profile(80 * 1024 * MiB);
  CHECK(cuda.usable_bytes() == 80 * 1024 * MiB - kCudaContextBytes);
  CHECK(device_allocation_bytes(cuda, 0) == 0);
  CHECK(device_allocation_bytes(cuda, 1) == 512);
  CHECK(device_allocation_bytes(cuda, 512) == 512);
  CHECK(device_allocation_bytes(cuda, 513) == 1024);
  CHECK(device_allocation_bytes(cuda, 4000) == 4096);
  CHECK(device_allocation_bytes(cuda, MiB) == MiB);                  // small pool
  CHECK(device_allocation_bytes(cuda, MiB + 1) == MiB + 512);        // split from 20 MiB
  CHECK(device_allocation_bytes(cuda, 9 * MiB + MiB / 2) == 9 * MiB + MiB / 2);
  CHECK(device_allocation_bytes(cuda, 10 * MiB) == 10 * MiB);        // own 10 MiB segment
  CHECK(device_allocation_bytes(cuda, 10 * MiB + 1) == 10 * MiB + 512);  // 12 MiB, split
  CHECK(device_allocation_bytes(cuda, 11 * MiB) == 12 * MiB);        // 1 MiB left: no split
  CHECK(device_allocation_bytes(cuda, 19 * MiB + MiB / 2) == 20 * MiB);
}

TEST_CASE("CUDA profile: segment sizes") {
  const DeviceProfile cuda = cuda_device_profile(16 * 1024 * MiB, 0);
  CHECK(cuda.usable_bytes() == cuda.total_bytes);
  CHECK(device_segment_bytes(cuda, 0) == 0);
  CHECK(device_segment_bytes(cuda, 1) == 2 * MiB);
  CHECK(device_segment_bytes(cuda, MiB) == 2 * MiB);
  CHECK(device_segment_bytes(cuda, MiB + 1) == 20 * MiB);
  CHECK(device_segment_bytes(cuda, 10 * MiB - 513) == 20 * MiB);  // block 10 MiB - 512
  CHECK(device_segment_bytes(cuda, 10 * MiB - 1) == 10 * MiB);    // block 10 MiB
  CHECK(device_segment_bytes(cuda, 10 * MiB) == 10 * MiB);
  CHECK(device_segment_bytes(cuda, 10 * MiB + 1) == 12 * MiB);
  CHECK(device_segment_bytes(cuda, 100 * MiB + 3) == 102 * MiB);
}

TEST_CASE("device profiles reject negative requests and unknown devices") {
  CHECK_THROWS_AS(device_allocation_bytes(cpu_device_profile(MiB), -1), std::invalid_argument);
  CHECK_THROWS_AS(device_segment_bytes(cuda_device_profile(MiB), -1), std::invalid_argument);
  CHECK_THROWS_AS(device_profile(torch::Device(torch::kMeta)), std::invalid_argument);
}
