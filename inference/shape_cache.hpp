// Values that depend on a data set only through its shape (persons, items,
// share of missing cells) and a seed, computed once and shared by the data
// sets of one run: the summary-space check's simulated side
// (summary_space_check.hpp) and the spread calibration
// (spread_at_shape.hpp). Safe to share between threads (data sets inferred
// side by side): one value is computed at a time, and a value handed out
// stays valid while its holder keeps it, whatever the others drop. The last
// kKeptShapes are kept.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace bfhpo::inference {

inline constexpr size_t kKeptShapes = 16;

template <class Value>
class ShapeCache {
 public:
  // persons, items, missing share, and a seed or a count the value depends on as well
  using Key = std::tuple<int64_t, int64_t, double, uint64_t>;

  // The value of `key`, made by `make` when it is not kept.
  std::shared_ptr<const Value> get(const Key& key, const std::function<Value()>& make) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = values_.find(key);
    if (found != values_.end()) return found->second;
    if (values_.size() >= kKeptShapes) values_.clear();
    return values_.emplace(key, std::make_shared<const Value>(make())).first->second;
  }
  size_t size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return values_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<const Value>> values_;
};

}  // namespace bfhpo::inference
