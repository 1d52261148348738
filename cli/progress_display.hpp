// Progress of a training run on the terminal. On a TTY one line is redrawn
// in place (epoch k/N, a bar over the epoch's steps, the step loss, the last
// validation loss, elapsed time and ETA); otherwise one plain line per epoch,
// so logs stay readable.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace bfhpo::cli {

class ProgressDisplay {
 public:
  explicit ProgressDisplay(std::string prefix, std::FILE* stream = stderr);
  void on_step(int epoch, int epochs, int step, int num_batches, double loss);
  void on_epoch(int epoch, int epochs, double train_loss, double validation_loss);
  // Ends the redrawn line (if any) so the next output starts on its own line.
  void finish();
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }

 private:
  std::string prefix_;
  std::FILE* stream_;
  bool live_;
  bool line_open_ = false;
  double last_validation_ = -1.0;
  bool has_validation_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace bfhpo::cli
