#include "memory/meter.hpp"

#include "memory/cpu_memory_tracking.hpp"

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <fstream>
#include <string>

using namespace bfhpo::memory;

TEST_CASE("MemoryMeter on the CPU: current, peak, reserved and reset") {
  MemoryMeter meter(torch::kCPU);
  meter.reset_peak();
  const MemorySnapshot before = meter.snapshot();
  CHECK(before.peak_bytes == before.current_bytes);
  {
    auto t = torch::empty({1 << 18}, torch::kFloat);  // exactly 1 MiB
    const MemorySnapshot during = meter.snapshot();
    CHECK(during.current_bytes == before.current_bytes + (1 << 20));
    CHECK(during.reserved_bytes == during.current_bytes + cpu_cached_bytes());
  }
  const MemorySnapshot after = meter.snapshot();
  CHECK(after.current_bytes == before.current_bytes);
  CHECK(after.reserved_bytes == after.current_bytes + cpu_cached_bytes());
  CHECK(after.peak_bytes == before.current_bytes + (1 << 20));
  CHECK(meter.peak_mb() == Approx(static_cast<double>(after.peak_bytes) / (1 << 20)));
  meter.reset_peak();
  CHECK(meter.snapshot().peak_bytes == after.current_bytes);
}

TEST_CASE("MemoryMeter rejects devices it cannot meter") {
  CHECK_THROWS_AS(MemoryMeter(torch::Device(torch::kMeta)), std::invalid_argument);
  CHECK_THROWS_AS(device_total_bytes(torch::Device(torch::kMeta)), std::invalid_argument);
}

TEST_CASE("device_total_bytes of the CPU is the physical RAM") {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (meminfo >> key >> kib && key != "MemTotal:") meminfo.ignore(256, '\n');
  REQUIRE(key == "MemTotal:");
  CHECK(device_total_bytes(torch::kCPU) == kib * 1024);
}
