#pragma once
// A progress line on stderr: rewritten in place (\r) on a terminal, a new line every `interval` seconds
// otherwise (when the output goes to a log through tee).
#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace isaac::bench {

class Progress {
 public:
  explicit Progress(double log_interval_seconds = 10) : interval_(log_interval_seconds), tty_(isatty(2) != 0) {}
  // Shows `line` now if enough time passed since the last one (or `force`).
  void show(const std::string& line, bool force = false) {
    auto now = std::chrono::steady_clock::now();
    double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.25 : interval_)) return;
    last_ = now;
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      open_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }
  // Ends the in-place line before other output.
  void finish_line() {
    if (tty_ && open_) std::fprintf(stderr, "\n");
    open_ = false;
    std::fflush(stderr);
  }

 private:
  double interval_;
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace isaac::bench
