#include "cli/progress_display.hpp"

#include <unistd.h>

#include <cmath>

namespace bfhpo::cli {
namespace {

std::string clock_text(double seconds) {
  const int s = static_cast<int>(std::lround(seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%d:%02d", s / 60, s % 60);
  return text;
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::string prefix, std::FILE* stream)
    : prefix_(std::move(prefix)), stream_(stream), live_(isatty(fileno(stream)) != 0) {}

void ProgressDisplay::on_step(int epoch, int epochs, int step, int num_batches, double loss) {
  if (!live_) return;
  constexpr int kWidth = 20;
  const int filled = kWidth * step / num_batches;
  const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double done = static_cast<double>((epoch - 1) * num_batches + step) / (static_cast<double>(epochs) * num_batches);
  const std::string validation = has_validation_ ? std::to_string(last_validation_).substr(0, 7) : "-";
  std::fprintf(stream_, "\r\033[K%sepoch %d/%d [%s] loss %.4f  val %s  %s elapsed, ETA %s", prefix_.c_str(), epoch,
               epochs, bar.c_str(), loss, validation.c_str(), clock_text(elapsed).c_str(),
               clock_text(done > 0 ? elapsed * (1 - done) / done : 0).c_str());
  std::fflush(stream_);
  line_open_ = true;
}

void ProgressDisplay::on_epoch(int epoch, int epochs, double train_loss, double validation_loss) {
  last_validation_ = validation_loss;
  has_validation_ = true;
  if (live_) return;
  std::fprintf(stream_, "%sepoch %d/%d  train loss %.4f  validation loss %.4f\n", prefix_.c_str(), epoch, epochs,
               train_loss, validation_loss);
  std::fflush(stream_);
}

void ProgressDisplay::finish() {
  if (line_open_) std::fputc('\n', stream_);
  line_open_ = false;
}

}  // namespace bfhpo::cli
