// Progress of a study on the terminal. On a TTY one line is redrawn in place
// for the running trial: its prefix (trial number, best so far), epoch k/N, a
// bar over the epoch's steps, the step loss, THIS trial's last validation
// loss ("-" before its first epoch), the trial's elapsed time and ETA, and the
// study's ETA from the trials finished so far (mean duration x trials left).
// Otherwise one plain line per epoch, so logs stay readable. Notices (an OOM
// and what the ladder does next) end the live line and print on their own.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace bfhpo::cli {

class ProgressDisplay {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // live: redraw one line (default: whether `stream` is a terminal).
  explicit ProgressDisplay(std::FILE* stream = stderr, std::optional<bool> live = std::nullopt,
                           Clock clock = std::chrono::steady_clock::now);

  // A new trial: forgets the previous trial's values; `trials_left_after` is
  // how many more trials the study needs after this one.
  void start_trial(std::string prefix, int trials_left_after);
  void on_step(int epoch, int epochs, int step, int num_batches, double loss);
  void on_epoch(int epoch, int epochs, double train_loss, double validation_loss);
  void notice(const std::string& text);
  // Ends the trial's live line; its duration feeds the study ETA.
  void finish_trial();
  // Seconds until the study is done, from finished trials' mean duration; none before the first.
  std::optional<double> study_eta(double trial_seconds_left) const;

 private:
  void end_line();
  double seconds_since(std::chrono::steady_clock::time_point start) const;

  std::FILE* stream_;
  bool live_;
  Clock clock_;
  std::string prefix_;
  bool line_open_ = false;
  std::optional<double> last_validation_;
  std::chrono::steady_clock::time_point trial_start_;
  int trials_left_after_ = 0;
  int trials_finished_ = 0;
  double finished_seconds_ = 0.0;
};

}  // namespace bfhpo::cli
