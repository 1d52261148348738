// A read-only view of consecutive trials -- a vector of them or the front of
// one -- so the study hands its trials to a sampler without copying them. It
// does not own the trials: they must outlive the view, which is why a
// temporary vector is refused at compile time.
#pragma once

#include "hpo/frozen_trial.hpp"

#include <cstddef>
#include <vector>

namespace bfhpo::hpo {

class TrialSpan {
 public:
  TrialSpan(const std::vector<FrozenTrial>& trials) : data_(trials.data()), size_(trials.size()) {}  // implicit
  TrialSpan(const std::vector<FrozenTrial>&&) = delete;
  // The first `size` trials of `trials` (at most all of them).
  TrialSpan(const std::vector<FrozenTrial>& trials, std::size_t size)
      : data_(trials.data()), size_(size < trials.size() ? size : trials.size()) {}

  const FrozenTrial* begin() const { return data_; }
  const FrozenTrial* end() const { return data_ + size_; }
  std::size_t size() const { return size_; }

 private:
  const FrozenTrial* data_;
  std::size_t size_;
};

}  // namespace bfhpo::hpo
