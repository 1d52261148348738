#include "common/heap_policy.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Keeps the compiler from eliding a malloc/free pair.
void* volatile escaped = nullptr;

// What an ask does to the heap: blocks of 8-80 KB, 1.4 MB in all, written
// and then freed; the page faults of a round.
long faults_of_a_round() {
  const long before = minor_faults();
  std::vector<void*> blocks;
  for (int i = 0; i < 32; ++i) {
    const std::size_t size = static_cast<std::size_t>(8 + (i % 10) * 8) << 10;
    escaped = std::malloc(size);
    std::memset(escaped, i, size);
    blocks.push_back(static_cast<void*>(escaped));
  }
  for (void* block : blocks) std::free(block);
  return minor_faults() - before;
}

// A large block, as a training step's tensors.
long faults_of_a_large_block(std::size_t size) {
  const long before = minor_faults();
  escaped = std::malloc(size);
  std::memset(escaped, 1, size);
  std::free(escaped);
  return minor_faults() - before;
}

}  // namespace

// Each case runs in a process of its own (ctest), so glibc starts from its
// defaults: 128 KiB mmap threshold and 256 KiB trim threshold, both raised
// only when a mapped block is freed. The first case is the control: what
// the others would see if the policy did nothing. Faults are compared with
// the first round's, which touches every page afresh (a 4 KiB page a fault,
// or fewer with transparent huge pages).
TEST_CASE("glibc by default trims what a round of small blocks freed and maps a large block afresh") {
  const long first_round = faults_of_a_round();
  CHECK(faults_of_a_round() > first_round / 4);  // measured: 148 of 338, every round
  const long first_block = faults_of_a_large_block(16 << 20);
  CHECK(faults_of_a_large_block(16 << 20) > first_block / 2);  // measured: 4064 of 4097
}

TEST_CASE("keep_freed_heap_for_reuse: the next rounds of small blocks fault nothing in") {
  bfhpo::keep_freed_heap_for_reuse();
  const long first_round = faults_of_a_round();  // the heap grows once
  REQUIRE(first_round > 0);
  CHECK(faults_of_a_round() * 10 < first_round);
  CHECK(faults_of_a_round() * 10 < first_round);
}

TEST_CASE("keep_freed_heap_for_reuse: a freed 16 MiB block is reused and not mapped afresh") {
  bfhpo::keep_freed_heap_for_reuse();
  const long first_block = faults_of_a_large_block(16 << 20);
  REQUIRE(first_block > 0);
  CHECK(faults_of_a_large_block(16 << 20) * 10 < first_block);
  CHECK(faults_of_a_large_block(16 << 20) * 10 < first_block);
}
