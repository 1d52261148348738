#include "memory/cuda_allocator_settings.hpp"

#include "common/user_error.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

using namespace bfhpo::memory;

namespace {
constexpr int64_t MiB = int64_t{1} << 20;

CudaAllocatorSettings parse(const std::string& text) { return parse_cuda_allocator_settings(text, "PYTORCH_ALLOC_CONF"); }

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST_CASE("Allocator settings: defaults when empty") {
  const CudaAllocatorSettings s = parse("");
  CHECK_FALSE(s.expandable_segments);
  CHECK_FALSE(s.async_backend);
  CHECK_FALSE(s.max_split_size_bytes);
  CHECK(s.warnings.empty());
  for (int64_t bytes : {int64_t{1}, MiB, 100 * MiB, int64_t{1} << 40}) CHECK(s.divisions_for(bytes) == 0);
}

TEST_CASE("Allocator settings: every modelled key, blanks ignored") {
  const CudaAllocatorSettings s =
      parse("expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6,"
            "max_non_split_rounding_mb:40,per_process_memory_fraction:0.5");
  CHECK(s.expandable_segments);
  CHECK(s.max_split_size_bytes == 128 * MiB);
  CHECK(s.max_non_split_rounding_bytes == 40 * MiB);
  CHECK(s.garbage_collection_threshold == 0.6);
  CHECK(s.per_process_memory_fraction == 0.5);
  CHECK(s.source == "PYTORCH_ALLOC_CONF=expandable_segments:True, max_split_size_mb:128,"
                    "garbage_collection_threshold:0.6,max_non_split_rounding_mb:40,per_process_memory_fraction:0.5");
  CHECK(s.warnings.empty());
}

TEST_CASE("Allocator settings: roundup_power2_divisions as one number applies to every size") {
  const CudaAllocatorSettings s = parse("roundup_power2_divisions:4");
  for (int64_t bytes : {int64_t{600}, MiB, 3 * MiB, 5000 * MiB, int64_t{1} << 40}) CHECK(s.divisions_for(bytes) == 4);
}

TEST_CASE("Allocator settings: roundup_power2_divisions as a list of MB intervals") {
  // [2, 4) MB: 2, and the first entry also covers every interval below it;
  // [4, 8) MB not named; '>' from the last named interval ([8, 16) MB) on: 16.
  const CudaAllocatorSettings s = parse("roundup_power2_divisions:[2:2,8:8,>:16]");
  CHECK(s.divisions_for(1000) == 2);  // below 1 MiB: the first interval
  CHECK(s.divisions_for(MiB + 5) == 2);
  CHECK(s.divisions_for(3 * MiB) == 2);
  CHECK(s.divisions_for(5 * MiB) == 0);
  CHECK(s.divisions_for(9 * MiB) == 16);
  CHECK(s.divisions_for(64 * MiB) == 16);
  CHECK(s.divisions_for(int64_t{1} << 40) == 16);  // beyond 32 GiB: the last interval
}

TEST_CASE("Allocator settings: cudaMallocAsync and unknown keys warn, naming the fix") {
  const CudaAllocatorSettings async = parse("backend:cudaMallocAsync");
  CHECK(async.async_backend);
  REQUIRE(async.warnings.size() == 1);
  CHECK_THAT(async.warnings[0], Catch::Contains("unreliable") && Catch::Contains("PYTORCH_ALLOC_CONF"));
  CHECK(parse("backend:native").warnings.empty());

  const CudaAllocatorSettings typo = parse("expandable_segment:True");
  REQUIRE(typo.warnings.size() == 1);
  CHECK_THAT(typo.warnings[0], Catch::Contains("expandable_segment'") && Catch::Contains("'expandable_segments'"));
  CHECK_FALSE(typo.expandable_segments);
  // A known key that does not change sizes is accepted silently, list values included.
  CHECK(parse("release_lock_on_cudamalloc:True,pinned_num_register_threads:8").warnings.empty());
}

TEST_CASE("Allocator settings: values PyTorch refuses are user errors naming the variable and key") {
  for (const char* bad : {"max_split_size_mb:10", "max_split_size_mb:abc", "garbage_collection_threshold:1.5",
                          "roundup_power2_divisions:3", "roundup_power2_divisions:[3:2]",
                          "expandable_segments:yes", "backend:magic", "expandable_segments", "max_split_size_mb:",
                          "per_process_memory_fraction:0"}) {
    CAPTURE(bad);
    try {
      parse(bad);
      FAIL("accepted");
    } catch (const bfhpo::UserError& e) {
      CHECK_THAT(e.what(), Catch::Contains("PYTORCH_ALLOC_CONF"));
      CHECK_THAT(e.what(), Catch::Contains(std::string(bad).substr(0, std::string(bad).find(':'))));
    }
  }
}

TEST_CASE("Allocator settings from the environment: PYTORCH_ALLOC_CONF first, a warning when both differ") {
  {
    ScopedEnv generic("PYTORCH_ALLOC_CONF", nullptr), cuda("PYTORCH_CUDA_ALLOC_CONF", nullptr);
    CHECK(cuda_allocator_settings_from_environment().source.empty());
  }
  {
    ScopedEnv generic("PYTORCH_ALLOC_CONF", nullptr), cuda("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    const CudaAllocatorSettings s = cuda_allocator_settings_from_environment();
    CHECK(s.expandable_segments);
    CHECK(s.warnings.empty());
  }
  {
    ScopedEnv generic("PYTORCH_ALLOC_CONF", "roundup_power2_divisions:2"),
        cuda("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    const CudaAllocatorSettings s = cuda_allocator_settings_from_environment();
    CHECK_FALSE(s.expandable_segments);
    CHECK(s.divisions_for(MiB) == 2);
    REQUIRE(s.warnings.size() == 1);
    CHECK_THAT(s.warnings[0], Catch::Contains("both set"));
  }
  {
    ScopedEnv generic("PYTORCH_ALLOC_CONF", "expandable_segments:True"),
        cuda("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    CHECK(cuda_allocator_settings_from_environment().warnings.empty());
  }
}
