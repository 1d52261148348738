#include "memory/cuda_allocator_settings.hpp"

#include "common/config_reader.hpp"
#include "common/user_error.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace bfhpo::memory {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int kFirstIntervalLog2 = 20;  // 1 MiB
// max_split_size_mb and max_non_split_rounding_mb may not go below the large
// pool's 20 MiB segment.
constexpr int64_t kMinSplitSizeMb = 20;

int floor_log2(uint64_t value) {
  int log = -1;
  while (value) {
    value >>= 1;
    ++log;
  }
  return log;
}

bool is_power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

// PyTorch's tokens: the separators , : [ ] are tokens of their own, blanks vanish.
std::vector<std::string> tokens_of(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  for (char c : text) {
    if (c == ',' || c == ':' || c == '[' || c == ']') {
      if (!word.empty()) tokens.push_back(word);
      word.clear();
      tokens.emplace_back(1, c);
    } else if (c != ' ') {
      word += c;
    }
  }
  if (!word.empty()) tokens.push_back(word);
  return tokens;
}

bool is_separator(const std::string& token) {
  return token == "," || token == ":" || token == "[" || token == "]";
}

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = {
      "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold", "roundup_power2_divisions",
      "expandable_segments", "backend", "per_process_memory_fraction", "release_lock_on_cudamalloc",
      "pinned_use_cuda_host_register", "pinned_num_register_threads", "pinned_use_background_threads",
      "pinned_reserve_segment_size_mb", "pinned_free_catch_all", "graph_capture_record_stream_reuse",
      "throw_on_cudamalloc_oom"};
  return keys;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& origin) : tokens_(tokens_of(text)), origin_(origin) {}

  CudaAllocatorSettings parse() {
    CudaAllocatorSettings s;
    while (i_ < tokens_.size()) {
      const std::string key = tokens_[i_++];
      expect(":", key);
      if (key == "max_split_size_mb") {
        s.max_split_size_bytes = split_size_mb(key) * kMiB;
      } else if (key == "max_non_split_rounding_mb") {
        s.max_non_split_rounding_bytes = split_size_mb(key) * kMiB;
      } else if (key == "garbage_collection_threshold") {
        s.garbage_collection_threshold = number(key);
        if (!(s.garbage_collection_threshold > 0 && s.garbage_collection_threshold < 1))
          fail(key, "must lie in (0, 1)");
      } else if (key == "per_process_memory_fraction") {
        s.per_process_memory_fraction = number(key);
        if (!(*s.per_process_memory_fraction > 0 && *s.per_process_memory_fraction <= 1))
          fail(key, "must lie in (0, 1]");
      } else if (key == "roundup_power2_divisions") {
        roundup(s, key);
      } else if (key == "expandable_segments") {
        s.expandable_segments = boolean(key);
      } else if (key == "backend") {
        const std::string backend = value(key);
        if (backend != "native" && backend != "cudaMallocAsync") fail(key, "must be native or cudaMallocAsync");
        s.async_backend = backend == "cudaMallocAsync";
      } else if (std::find(known_keys().begin(), known_keys().end(), key) != known_keys().end()) {
        skip_value();
      } else {
        s.warnings.push_back(origin_ + ": unknown allocator setting '" + key + "' (did you mean '" +
                             closest_name(key, known_keys()) + "'?): PyTorch refuses it at the first CUDA allocation");
        skip_value();
      }
      if (i_ < tokens_.size()) expect(",", key);
    }
    if (s.async_backend)
      s.warnings.push_back(origin_ +
                           ": backend:cudaMallocAsync is not modelled (CUDA's own pool rounds and caches): the "
                           "memory estimate is unreliable; remove it from " + origin_ + " for a reliable gate");
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw UserError(origin_ + ": allocator setting '" + key + "' " + why +
                    " (PyTorch refuses it too); fix or unset " + origin_);
  }
  void expect(const char* token, const std::string& key) {
    if (i_ >= tokens_.size() || tokens_[i_] != token) fail(key, std::string("expects '") + token + "' here");
    ++i_;
  }
  std::string value(const std::string& key) {
    if (i_ >= tokens_.size() || is_separator(tokens_[i_])) fail(key, "has no value");
    return tokens_[i_++];
  }
  double number(const std::string& key) {
    const std::string text = value(key);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') fail(key, "expects a number, got '" + text + "'");
    return v;
  }
  int64_t integer(const std::string& key) {
    const double v = number(key);
    if (v != static_cast<double>(static_cast<int64_t>(v)) || v < 0) fail(key, "expects a whole number");
    return static_cast<int64_t>(v);
  }
  int64_t split_size_mb(const std::string& key) {
    const int64_t mb = integer(key);
    if (mb < kMinSplitSizeMb) fail(key, "must be >= " + std::to_string(kMinSplitSizeMb));
    return mb;
  }
  bool boolean(const std::string& key) {
    const std::string text = value(key);
    if (text != "True" && text != "False") fail(key, "expects True or False, got '" + text + "'");
    return text == "True";
  }
  int64_t divisions(const std::string& key) {
    const int64_t d = integer(key);
    if (d != 0 && !is_power_of_two(d)) fail(key, "divisions must be a power of two (or 0)");
    return d;
  }
  void skip_value() {
    if (i_ < tokens_.size() && tokens_[i_] == "[") {
      while (i_ < tokens_.size() && tokens_[i_] != "]") ++i_;
      ++i_;
    } else {
      ++i_;
    }
  }
  // One number for every interval, or "[MB:divisions,...,>:divisions]": the
  // first entry also covers the intervals below it, '>' every interval from
  // the last one named on (PyTorch's rule).
  void roundup(CudaAllocatorSettings& s, const std::string& key) {
    auto& table = s.roundup_power2_divisions;
    if (i_ >= tokens_.size() || tokens_[i_] != "[") {
      table.fill(divisions(key));
      return;
    }
    ++i_;
    bool first = true;
    int last = 0;
    while (i_ < tokens_.size() && tokens_[i_] != "]") {
      const std::string interval = tokens_[i_++];
      expect(":", key);
      const int64_t d = divisions(key);
      if (interval == ">") {
        std::fill(table.begin() + last, table.end(), d);
      } else {
        char* end = nullptr;
        const long long mb = std::strtoll(interval.c_str(), &end, 10);
        if (end == interval.c_str() || *end != '\0' || !is_power_of_two(mb))
          fail(key, "intervals must be a power of two of MB, got '" + interval + "'");
        const int index = std::clamp(floor_log2(static_cast<uint64_t>(mb)), 0, kRoundupIntervals - 1);
        if (first) std::fill(table.begin(), table.begin() + index, d);
        first = false;
        table[index] = d;
        last = index;
      }
      if (i_ < tokens_.size() && tokens_[i_] == ",") ++i_;
    }
    expect("]", key);
  }

  std::vector<std::string> tokens_;
  std::string origin_;
  size_t i_ = 0;
};

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

}  // namespace

int64_t CudaAllocatorSettings::divisions_for(int64_t bytes) const {
  if (bytes <= 0) throw std::invalid_argument("divisions_for: a request must be positive");
  const int index = std::clamp(floor_log2(static_cast<uint64_t>(bytes)) - kFirstIntervalLog2, 0, kRoundupIntervals - 1);
  return roundup_power2_divisions[index];
}

CudaAllocatorSettings parse_cuda_allocator_settings(const std::string& text, const std::string& origin) {
  CudaAllocatorSettings settings = Parser(text, origin).parse();
  settings.source = origin + "=" + text;
  return settings;
}

CudaAllocatorSettings cuda_allocator_settings_from_environment() {
  const auto generic = environment("PYTORCH_ALLOC_CONF");
  const auto cuda = environment("PYTORCH_CUDA_ALLOC_CONF");
  if (!generic && !cuda) return {};
  CudaAllocatorSettings settings = generic ? parse_cuda_allocator_settings(*generic, "PYTORCH_ALLOC_CONF")
                                           : parse_cuda_allocator_settings(*cuda, "PYTORCH_CUDA_ALLOC_CONF");
  if (generic && cuda && *generic != *cuda)
    settings.warnings.push_back(
        "PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF are both set and differ; the estimate reads "
        "PYTORCH_ALLOC_CONF, libtorch versions differ in which one the allocator reads: set only one");
  return settings;
}

}  // namespace bfhpo::memory
