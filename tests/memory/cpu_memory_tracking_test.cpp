#include "memory/cpu_memory_tracking.hpp"
#include "memory/meter.hpp"
#include "memory/oom.hpp"

#include <c10/core/CPUAllocator.h>
#include <catch2/catch.hpp>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace bfhpo::memory;

namespace {

std::string oom_message_of(int64_t floats) {
  try {
    auto t = torch::empty({floats}, torch::kFloat);
  } catch (const c10::OutOfMemoryError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cpu tracking counts a tensor's bytes exactly and keeps the peak") {
  install_cpu_memory_tracking();
  reset_cpu_peak();
  const int64_t before = cpu_current_bytes();
  {
    auto t = torch::empty({1000}, torch::kFloat);
    CHECK(cpu_current_bytes() == before + 4000);
    auto d = torch::empty({10, 10}, torch::kDouble);
    CHECK(cpu_current_bytes() == before + 4800);
  }
  CHECK(cpu_current_bytes() == before);
  CHECK(cpu_peak_bytes() == before + 4800);
  reset_cpu_peak();
  CHECK(cpu_peak_bytes() == before);
}

TEST_CASE("cpu tracking: empty tensors count nothing") {
  const int64_t before = cpu_current_bytes();
  {
    auto t = torch::empty({0}, torch::kFloat);
    auto u = torch::empty({3, 0}, torch::kDouble);
    CHECK(cpu_current_bytes() == before);
  }
  CHECK(cpu_current_bytes() == before);
}

TEST_CASE("cpu tracking: tensors from before installation are never counted") {
  // Run alone (as ctest does), this tensor predates the tracking allocator.
  auto early = torch::empty({1000}, torch::kFloat);
  install_cpu_memory_tracking();
  const int64_t before = cpu_current_bytes();
  early = torch::Tensor();
  CHECK(cpu_current_bytes() >= 0);
  CHECK((cpu_current_bytes() == before || cpu_current_bytes() == before - 4000));
}

TEST_CASE("cpu tracking: the raw allocate/deallocate interface is counted") {
  install_cpu_memory_tracking();
  c10::Allocator* allocator = c10::GetCPUAllocator();
  const int64_t before = cpu_current_bytes();
  void* p = allocator->raw_allocate(1024);
  CHECK(cpu_current_bytes() == before + 1024);
  allocator->raw_deallocate(p);
  CHECK(cpu_current_bytes() == before);
}

TEST_CASE("cpu tracking: an allocation the system refuses leaves no trace") {
  install_cpu_memory_tracking();
  const int64_t before = cpu_current_bytes();
  // 2^48 bytes: more than any machine's address space allows.
  CHECK_THROWS_AS(torch::empty({int64_t{1} << 46}, torch::kFloat), c10::Error);
  CHECK(cpu_current_bytes() == before);
}

TEST_CASE("cpu tracking: concurrent allocations balance to zero") {
  const int64_t before = cpu_current_bytes();
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([] {
      std::vector<torch::Tensor> held;
      for (int i = 0; i < 200; ++i) {
        held.push_back(torch::empty({(i % 7 + 1) * 100}, torch::kFloat));
        if (held.size() > 5) held.erase(held.begin());
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(cpu_current_bytes() == before);
}

TEST_CASE("cpu budget: an over-budget allocation throws CUDA's OOM type") {
  const int64_t before = cpu_current_bytes();
  CpuMemoryBudget budget(before + 10000);
  auto fits = torch::empty({1000}, torch::kFloat);  // 4000 bytes
  const std::string message = oom_message_of(2000);  // 8000 more: over by 2000
  REQUIRE_FALSE(message.empty());
  CHECK_THAT(message, Catch::Contains("out of memory"));
  CHECK_THAT(message, Catch::Contains("Tried to allocate 8000 bytes"));
  CHECK_THAT(message, Catch::Contains(std::to_string(before + 4000) + " bytes"));
  CHECK_THAT(message, Catch::Contains("budget " + std::to_string(before + 10000) + " bytes"));
  CHECK(cpu_current_bytes() == before + 4000);  // the failed request left no trace
  auto exactly_to_the_limit = torch::empty({1500}, torch::kFloat);
  CHECK(cpu_current_bytes() == before + 10000);
}

TEST_CASE("cpu budget: is_oom_error recognises it, also nested") {
  CpuMemoryBudget budget(cpu_current_bytes() + 100);
  try {
    try {
      auto t = torch::ones({1000});
      FAIL("no OOM under the budget");
    } catch (...) {
      std::throw_with_nested(std::runtime_error("trial 7: training step failed"));
    }
  } catch (const c10::OutOfMemoryError&) {
    FAIL("the outer exception is the runtime_error");
  } catch (const std::exception& e) {
    CHECK(is_oom_error(e));
  }
}

TEST_CASE("cpu budget: scopes nest and restore the previous budget") {
  CHECK(cpu_memory_budget() == 0);
  {
    CpuMemoryBudget outer(int64_t{1} << 30);
    CHECK(cpu_memory_budget() == int64_t{1} << 30);
    {
      CpuMemoryBudget inner(cpu_current_bytes() + 1000);
      CHECK_THROWS_AS(torch::empty({1000}, torch::kFloat), c10::OutOfMemoryError);
    }
    CHECK(cpu_memory_budget() == int64_t{1} << 30);
    CHECK_NOTHROW(torch::empty({1000}, torch::kFloat));
  }
  CHECK(cpu_memory_budget() == 0);
  CHECK_THROWS_AS(CpuMemoryBudget(0), std::invalid_argument);
  CHECK(cpu_memory_budget() == 0);
}

TEST_CASE("cpu budget: a too-small budget fails a real training step without leaking") {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(16, 64), torch::nn::ReLU(), torch::nn::Linear(64, 64),
                            torch::nn::ReLU(), torch::nn::Linear(64, 1));
  const auto x = torch::randn({256, 16});
  const auto drop_grads = [&] {
    for (auto& p : net->parameters()) p.mutable_grad() = torch::Tensor();
  };
  const int64_t baseline = cpu_current_bytes();

  // Unconstrained: the peak of the forward pass and of forward + backward.
  reset_cpu_peak();
  int64_t forward_peak = 0;
  {
    auto loss = net->forward(x).pow(2).mean();
    forward_peak = cpu_peak_bytes() - baseline;
    loss.backward();
  }
  const int64_t step_peak = cpu_peak_bytes() - baseline;
  drop_grads();
  REQUIRE(cpu_current_bytes() == baseline);
  REQUIRE(forward_peak < step_peak);

  // A budget the forward pass fits but backward does not: the OOM comes out of
  // the autograd engine with its type intact.
  {
    CpuMemoryBudget budget(baseline + (forward_peak + step_peak) / 2);
    bool forward_done = false;
    try {
      auto loss = net->forward(x).pow(2).mean();
      forward_done = true;
      loss.backward();
      FAIL("backward fitted a budget below its unconstrained peak");
    } catch (const c10::OutOfMemoryError& e) {
      CHECK(is_oom_error(e));
    }
    CHECK(forward_done);
    drop_grads();
    CHECK(cpu_current_bytes() == baseline);
  }

  // After the OOM the same step runs again without a budget.
  auto loss = net->forward(x).pow(2).mean();
  loss.backward();
  CHECK(cpu_peak_bytes() - baseline == step_peak);
  drop_grads();
}

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

torch::Tensor bytes_tensor(int64_t bytes) { return torch::empty({bytes}, torch::kUInt8); }

}  // namespace

TEST_CASE("cpu cache: a freed large block serves the next request it fits, counted only while held") {
  install_cpu_memory_tracking();
  release_cpu_cache();
  const int64_t before = cpu_current_bytes();
  void* first = nullptr;
  {
    auto t = bytes_tensor(4 * kMiB);
    first = t.data_ptr();
  }
  CHECK(cpu_current_bytes() == before);
  CHECK(cpu_cached_bytes() == 4 * kMiB);
  {
    auto u = bytes_tensor(3 * kMiB);
    CHECK(u.data_ptr() == first);
    CHECK(cpu_current_bytes() == before + 3 * kMiB);
    CHECK(cpu_cached_bytes() == 0);
  }
  CHECK(cpu_cached_bytes() == 4 * kMiB);
  {
    // Under half the block: a block of its own, the cached one stays.
    auto small = bytes_tensor(kMiB + 1);
    CHECK(small.data_ptr() != first);
    CHECK(cpu_cached_bytes() == 4 * kMiB);
  }
  safe_empty_cache();
  CHECK(cpu_cached_bytes() == 0);
  CHECK(cpu_current_bytes() == before);
}

TEST_CASE("cpu cache: blocks under 1 MiB are not cached") {
  install_cpu_memory_tracking();
  release_cpu_cache();
  { auto t = bytes_tensor(kMiB - 1); }
  CHECK(cpu_cached_bytes() == 0);
}

TEST_CASE("cpu cache property: under a budget, random allocations and frees count exactly what tensors hold") {
  // Whatever the cache holds, the tracked bytes are the live tensors' bytes,
  // the peak their maximum, an allocation throws exactly when the live bytes
  // plus its own exceed the budget, and allocations are served from the cache
  // (it shrinks when one is taken from it).
  install_cpu_memory_tracking();
  release_cpu_cache();
  const int64_t before = cpu_current_bytes();
  const int64_t budget = before + 24 * kMiB;
  std::mt19937_64 random(7);
  std::vector<torch::Tensor> held;
  int64_t live = before;
  int64_t most = before;
  int ooms = 0;
  int reused = 0;
  {
    CpuMemoryBudget scope(budget);
    reset_cpu_peak();
    for (int op = 0; op < 400; ++op) {
      if (!held.empty() && random() % 3 == 0) {
        const size_t k = random() % held.size();
        live -= held[k].nbytes();
        held.erase(held.begin() + static_cast<long>(k));
      } else {
        const int64_t bytes = static_cast<int64_t>(random() % static_cast<uint64_t>(10 * kMiB)) + 1;
        const bool fits = live + bytes <= budget;
        const int64_t cached_before = cpu_cached_bytes();
        bool thrown = false;
        try {
          held.push_back(bytes_tensor(bytes));
          live += bytes;
          if (cpu_cached_bytes() < cached_before) ++reused;
        } catch (const c10::OutOfMemoryError&) {
          thrown = true;
          ++ooms;
          CHECK(cpu_cached_bytes() == 0);  // a refusal returns the cache first
        }
        REQUIRE(thrown == !fits);
      }
      most = std::max(most, live);
      REQUIRE(cpu_current_bytes() == live);
      REQUIRE(cpu_peak_bytes() == most);
    }
  }
  CHECK(ooms > 10);    // the sequence did test the budget
  CHECK(reused > 10);  // and the cache
  held.clear();
  CHECK(cpu_current_bytes() == before);
  CHECK(cpu_cached_bytes() > 0);
  release_cpu_cache();
  CHECK(cpu_cached_bytes() == 0);
}

TEST_CASE("cpu tracking: glibc serves blocks below 32 MiB from its heap, which keeps them when freed") {
  install_cpu_memory_tracking();
  constexpr size_t kBlock = size_t{16} << 20;
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(kBlock);
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBlock);
  CHECK(mallinfo2().hblkhd == mapped_before);  // from the heap, not a fresh mapping
  std::free(block);
  CHECK(mallinfo2().fordblks >= kBlock);  // free in the heap for the next one, not unmapped or trimmed
}
