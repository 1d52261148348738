#include "inference/many_data_sets.hpp"

#include "common/user_error.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>

namespace bfhpo::inference {

namespace {

// How far ahead of the next data set to hand over a worker may run: bounds the finished results waiting
// behind a slow one.
constexpr size_t kLookAheadPerWorker = 2;

size_t longest_name(const ResponseMatrix& data) {
  size_t longest = 0;
  for (const auto& name : data.item_names) longest = std::max(longest, name.size());
  return longest;
}

// The data sets' shared state: the next to start, the results waiting to be handed over in order, and
// the memory the data sets in flight hold.
class Schedule {
 public:
  Schedule(size_t total, size_t workers, double memory_budget_mb)
      : total_(total), look_ahead_(workers * kLookAheadPerWorker), budget_mb_(memory_budget_mb) {}

  // The next data set's index, or none when every one has started (or a worker failed).
  std::optional<size_t> next() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || started_ >= total_ || started_ < handed_over_ + look_ahead_; });
    if (stopped_ || started_ >= total_) return std::nullopt;
    return started_++;
  }
  // Waits until `need_mb` more fits beside the data sets in flight (or none is in flight: one data set
  // over the budget runs alone, and infer_data_set says it does not fit).
  void reserve(double need_mb) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || in_flight_mb_ == 0.0 || in_flight_mb_ + need_mb <= budget_mb_; });
    in_flight_mb_ += need_mb;
    ++in_flight_;
  }
  void release(double need_mb) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--in_flight_ == 0) in_flight_mb_ = 0.0;  // no rounding left behind
    else in_flight_mb_ -= need_mb;
    changed_.notify_all();
  }
  // Keeps `outcome` and hands over, in index order, every finished one that is next.
  void finish(size_t index, DataSetOutcome outcome, const OnDataSet& on_each) {
    const std::lock_guard<std::mutex> lock(mutex_);
    finished_.emplace(index, std::move(outcome));
    for (auto first = finished_.begin(); first != finished_.end() && first->first == handed_over_;
         first = finished_.begin()) {
      on_each(first->first, first->second);
      finished_.erase(first);
      ++handed_over_;
    }
    changed_.notify_all();
  }
  void stop() {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t total_, look_ahead_;
  double budget_mb_;
  size_t started_ = 0, handed_over_ = 0, in_flight_ = 0;
  double in_flight_mb_ = 0.0;
  bool stopped_ = false;
  std::map<size_t, DataSetOutcome> finished_;
};

}  // namespace

void infer_many(TrainedModel& model, DataSetSources& sources, const InferenceOptions& options, const OnDataSet& on_each,
                int64_t at_once) {
  SummarySpaceReferences references;
  ShapeSpreads spreads;
  const size_t workers =
      std::min(sources.size(), static_cast<size_t>(at_once > 0 ? at_once : trials::available_cpus()));
  Schedule schedule(sources.size(), workers, default_inference_budget().mb);
  std::mutex reading;
  const auto infer_one = [&](size_t index) {
    const auto start = std::chrono::steady_clock::now();
    const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    DataSetOutcome outcome;
    DataSetRead read;
    {
      const std::lock_guard<std::mutex> lock(reading);
      read = sources.read(index);
    }
    if (!read.data) {
      outcome.row = DataSetRow::failed(sources.name(index), read.error, seconds());
      return outcome;
    }
    const auto& data = *read.data;
    const double need_mb =
        inference_memory_mb(model, data.responses.size(0), data.responses.size(1), options.draws, longest_name(data));
    schedule.reserve(need_mb);
    std::vector<std::string> warnings;
    try {
      InferenceOptions own = options;
      own.data_set = index;
      outcome.result = infer_data_set(model, data, own, [&](const std::string& line) {
        if (line.rfind("warning: ", 0) == 0) warnings.push_back(line.substr(9));
      }, &references, &spreads);
    } catch (const UserError& error) {
      schedule.release(need_mb);
      outcome.row = DataSetRow::failed(sources.name(index), error.what(), seconds());
      return outcome;
    } catch (...) {
      schedule.release(need_mb);
      throw;
    }
    schedule.release(need_mb);
    outcome.row = DataSetRow::of(sources.name(index), data, *outcome.result, seconds(), std::move(warnings));
    return outcome;
  };
  const auto work = [&] {
    try {
      while (const auto index = schedule.next()) schedule.finish(*index, infer_one(*index), on_each);
    } catch (...) {
      schedule.stop();
      throw;
    }
  };
  // One at a time on this thread, where each data set's stages spread over the cores themselves.
  if (workers <= 1) return work();
  trials::for_each_on_workers(static_cast<int64_t>(workers), [&](int64_t) { work(); });
}

}  // namespace bfhpo::inference
