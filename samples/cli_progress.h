// A progress line on stderr for work longer than about a second (loading, generating, validating
// a big scene): a phase label, the elapsed time, and a bar where the fraction is known.
//
// Only when stderr is a terminal: piped or redirected stderr gets nothing of the kind, so logs
// and scripts see only warnings and errors. A background ticker redraws the line ten times a
// second once the phase has run for the delay, and erases it when the phase ends, so nothing
// is left on the terminal after a fast command.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace tprop::cli {

// One progress line, without the carriage return: "LABEL [#####-----]  50%  1.2 s" when the
// fraction (clamped to [0, 1]) is known, "LABEL  1.2 s" when not. The bar is `bar_width` cells.
std::string format_progress_line(const std::string& label, std::optional<double> fraction,
                                 double elapsed_s, int bar_width = 30);

class Progress {
 public:
  // Draws on `out` only when `enabled` (normally: isatty(fileno(stderr))). The delay before the
  // first drawing is `delay` (TPROP_PROGRESS_DELAY_MS overrides it, for tests).
  Progress(std::FILE* out, bool enabled,
           std::chrono::milliseconds delay = std::chrono::milliseconds(1000));
  // For stderr: enabled when it is a terminal.
  static Progress for_stderr();
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a phase (ends the previous one): its clock starts now, its fraction is unknown.
  void phase(const std::string& label);
  void set_fraction(double fraction);
  // Ends the phase and erases the line if one was drawn. Call before printing to the same stream.
  void done();

  bool enabled() const { return enabled_; }

 private:
  void tick_loop();
  void erase_locked();

  std::FILE* out_;
  const bool enabled_;
  const std::chrono::milliseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string label_;
  bool active_ = false;
  bool drawn_ = false;
  bool stop_ = false;
  std::optional<double> fraction_;
  std::chrono::steady_clock::time_point started_;
  std::thread ticker_;
};

}  // namespace tprop::cli
