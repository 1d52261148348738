#include "cli/progress_display.hpp"

#include "common/number_format.hpp"

#include <unistd.h>

namespace bfhpo::cli {

ProgressDisplay::ProgressDisplay(std::FILE* stream, std::optional<bool> live, Clock clock)
    : stream_(stream), live_(live.value_or(isatty(fileno(stream)) != 0)), clock_(std::move(clock)),
      trial_start_(clock_()) {}

double ProgressDisplay::seconds_since(std::chrono::steady_clock::time_point start) const {
  return std::chrono::duration<double>(clock_() - start).count();
}

void ProgressDisplay::start_trial(std::string prefix, int trials_left_after) {
  end_line();
  prefix_ = std::move(prefix);
  last_validation_.reset();
  trial_start_ = clock_();
  trials_left_after_ = trials_left_after;
}

std::optional<double> ProgressDisplay::study_eta(double trial_seconds_left) const {
  if (trials_finished_ == 0) return std::nullopt;
  return trial_seconds_left + trials_left_after_ * finished_seconds_ / trials_finished_;
}

void ProgressDisplay::on_step(int epoch, int epochs, int step, int num_batches, double loss) {
  if (!live_) return;
  constexpr int kWidth = 20;
  const int filled = static_cast<int>(static_cast<int64_t>(kWidth) * step / num_batches);
  const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  const double elapsed = seconds_since(trial_start_);
  const double done = static_cast<double>((epoch - 1) * num_batches + step) / (static_cast<double>(epochs) * num_batches);
  const double left = done > 0 ? elapsed * (1 - done) / done : 0.0;
  const std::optional<double> study_left = study_eta(left);
  std::fprintf(stream_, "\r\033[K%sepoch %d/%d [%s] loss %s  val %s  %s, trial ETA %s%s", prefix_.c_str(), epoch,
               epochs, bar.c_str(), format_number(loss).c_str(), format_number(last_validation_).c_str(),
               format_duration(elapsed).c_str(), format_duration(left).c_str(),
               study_left ? (", study ETA " + format_duration(*study_left)).c_str() : "");
  std::fflush(stream_);
  line_open_ = true;
}

void ProgressDisplay::on_epoch(int epoch, int epochs, double train_loss, double validation_loss) {
  last_validation_ = validation_loss;
  if (live_) return;
  std::fprintf(stream_, "%sepoch %d/%d  train loss %s  validation loss %s\n", prefix_.c_str(), epoch, epochs,
               format_number(train_loss).c_str(), format_number(validation_loss).c_str());
  std::fflush(stream_);
}

void ProgressDisplay::notice(const std::string& text) {
  end_line();
  std::fprintf(stream_, "%s\n", text.c_str());
  std::fflush(stream_);
}

void ProgressDisplay::finish_trial() {
  end_line();
  ++trials_finished_;
  finished_seconds_ += seconds_since(trial_start_);
}

void ProgressDisplay::end_line() {
  if (line_open_) std::fputc('\n', stream_);
  line_open_ = false;
}

}  // namespace bfhpo::cli
