#include "cli/progress_display.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using bfhpo::cli::ProgressDisplay;
using namespace std::chrono;

namespace {

// A display writing to a temporary file, on a clock the test moves.
struct Captured {
  std::FILE* file = std::tmpfile();
  steady_clock::time_point now{};
  ProgressDisplay display{file, true, [this] { return now; }};
  ~Captured() { std::fclose(file); }
  void advance(double seconds) { now += duration_cast<steady_clock::duration>(duration<double>(seconds)); }
  // The last redrawn line.
  std::string last_line() {
    std::fflush(file);
    std::rewind(file);
    std::string text, line;
    for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
    const auto start = text.rfind('\r');
    return text.substr(start == std::string::npos ? 0 : start + 1);
  }
};

}  // namespace

TEST_CASE("the live line shows this trial's own validation loss, never the previous trial's") {
  Captured c;
  c.display.start_trial("trial 5  ", 3);
  c.display.on_step(1, 2, 1, 4, 2.5);
  c.display.on_epoch(1, 2, 2.4, 0.95535);
  c.display.on_step(2, 2, 1, 4, 2.0);
  CHECK_THAT(c.last_line(), Catch::Contains("val 0.9554"));
  c.display.finish_trial();
  c.display.start_trial("trial 6  ", 2);
  c.display.on_step(1, 2, 1, 4, 2.2);
  CHECK_THAT(c.last_line(), Catch::Contains("trial 6") && Catch::Contains("val -") && !Catch::Contains("0.9554"));
}

TEST_CASE("the trial ETA comes from this trial's progress, the study ETA from the finished trials") {
  Captured c;
  c.display.start_trial("trial 0  ", 2);
  c.advance(30);  // a quarter of the trial's steps in 30 s: 90 s left
  c.display.on_step(1, 2, 2, 4, 1.0);
  CHECK_THAT(c.last_line(), Catch::Contains("trial ETA 1:30") && !Catch::Contains("study ETA"));
  c.advance(90);
  c.display.finish_trial();  // 120 s a trial
  c.display.start_trial("trial 1  ", 1);
  c.advance(60);  // half of it: 60 s left, then one more trial of 120 s
  c.display.on_step(2, 2, 0, 4, 1.0);
  CHECK_THAT(c.last_line(), Catch::Contains("1:00, trial ETA 1:00, study ETA 3:00"));
  REQUIRE(c.display.study_eta(60.0));
  CHECK(*c.display.study_eta(60.0) == Approx(180.0));
}

TEST_CASE("a notice ends the live line and stands on its own line") {
  Captured c;
  c.display.start_trial("trial 2  ", 0);
  c.display.on_step(1, 1, 1, 2, 3.0);
  c.display.notice("trial 2: out of memory at step 1 with batch 32, chunk none: retrying the step with batch 32, chunk 8, checkpointing");
  CHECK(c.last_line().find("\ntrial 2: out of memory") != std::string::npos);
  CHECK(c.last_line().back() == '\n');
}
