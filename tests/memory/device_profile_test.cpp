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

TEST_CASE("CUDA profile: roundup_power2_divisions rounds to the next division of the power-of-two interval") {
  const DeviceProfile cuda =
      cuda_device_profile(16 * 1024 * MiB, 0, parse_cuda_allocator_settings("roundup_power2_divisions:4", "test"));
  CHECK(device_allocation_bytes(cuda, 1000) == 1024);              // below 512 * 4: plain rounding
  CHECK(device_allocation_bytes(cuda, 2048) == 2048);              // a power of two stays
  CHECK(device_allocation_bytes(cuda, 2049) == 2560);              // [2048, 4096) in steps of 512
  CHECK(device_allocation_bytes(cuda, 5 * MiB) == 5 * MiB);        // on a division of [4, 8) MiB
  CHECK(device_allocation_bytes(cuda, 5 * MiB + 1) == 6 * MiB);    // next division; 14 MiB left of 20: split
  CHECK(device_allocation_bytes(cuda, 33 * MiB) == 40 * MiB);      // [32, 64) in steps of 8 MiB, own segment
  CHECK(device_segment_bytes(cuda, 33 * MiB) == 40 * MiB);
  // Property: the block covers the request, sits on a division, and is the nearest one above.
  for (int64_t bytes = 4096 + 7; bytes < 256 * MiB; bytes = bytes * 3 + 11) {
    const int64_t divisions = 4;
    int64_t floor = 1;
    while (floor * 2 <= bytes) floor *= 2;
    const int64_t step = floor / divisions;
    const int64_t block = device_allocation_bytes(cuda, bytes);
    CAPTURE(bytes, block);
    CHECK(block >= bytes);
    CHECK(block % step == 0);
    CHECK(block - bytes < step);
  }
}

TEST_CASE("CUDA profile: expandable segments split every block and grow by pages") {
  const DeviceProfile cuda =
      cuda_device_profile(16 * 1024 * MiB, 0, parse_cuda_allocator_settings("expandable_segments:True", "test"));
  CHECK(device_allocation_bytes(cuda, 513) == 1024);
  CHECK(device_allocation_bytes(cuda, 11 * MiB) == 11 * MiB);            // no whole segment held
  CHECK(device_allocation_bytes(cuda, 19 * MiB + MiB / 2) == 19 * MiB + MiB / 2);
  CHECK(device_segment_bytes(cuda, 1000) == 2 * MiB);                   // small pool page
  CHECK(device_segment_bytes(cuda, MiB + 1) == 20 * MiB);               // large pool page
  CHECK(device_segment_bytes(cuda, 21 * MiB) == 40 * MiB);
}

TEST_CASE("CUDA profile: usable bytes, per_process_memory_fraction and the allocator's warnings") {
  const int64_t total = 100 * 1024 * MiB;
  CHECK(cuda_device_profile(total, 1024 * MiB).usable_bytes() == total - 1024 * MiB);
  const DeviceProfile half =
      cuda_device_profile(total, 1024 * MiB, parse_cuda_allocator_settings("per_process_memory_fraction:0.5", "t"));
  CHECK(half.usable_bytes() == total / 2);
  const DeviceProfile async =
      cuda_device_profile(total, 0, parse_cuda_allocator_settings("backend:cudaMallocAsync", "PYTORCH_ALLOC_CONF"));
  REQUIRE(async.warnings.size() == 1);
  CHECK_THAT(async.warnings[0], Catch::Contains("cudaMallocAsync"));
  CHECK(cuda_device_profile(total, 0, {}, 64 * MiB).workspace_bytes == 64 * MiB);
}

TEST_CASE("device profiles reject negative requests and unknown devices") {
  CHECK_THROWS_AS(device_allocation_bytes(cpu_device_profile(MiB), -1), std::invalid_argument);
  CHECK_THROWS_AS(device_segment_bytes(cuda_device_profile(MiB), -1), std::invalid_argument);
  CHECK_THROWS_AS(device_profile(torch::Device(torch::kMeta)), std::invalid_argument);
  CHECK_THROWS_AS(device_compute_capability_major(torch::kCPU), std::invalid_argument);
  CHECK_THROWS_AS(cuda_bytes_outside_allocator(torch::kCPU), std::invalid_argument);
}
