#include "cli_progress.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tprop::cli {

std::string format_progress_line(const std::string& label, std::optional<double> fraction,
                                 double elapsed_s, int bar_width) {
  char time[32];
  std::snprintf(time, sizeof time, "%.1f s", std::max(0.0, elapsed_s));
  if (!fraction) return label + "  " + time;
  const double f = std::clamp(*fraction, 0.0, 1.0);
  const int filled = static_cast<int>(std::floor(f * bar_width));
  char percent[8];
  std::snprintf(percent, sizeof percent, "%3d%%", static_cast<int>(std::floor(f * 100.0)));
  return label + " [" + std::string(size_t(filled), '#') +
         std::string(size_t(bar_width - filled), '-') + "] " + percent + "  " + time;
}

namespace {

std::chrono::milliseconds delay_from_env(std::chrono::milliseconds fallback) {
  const char* v = std::getenv("TPROP_PROGRESS_DELAY_MS");
  if (!v) return fallback;
  unsigned ms = 0;
  const auto [ptr, ec] = std::from_chars(v, v + std::strlen(v), ms);
  if (ec != std::errc() || *ptr != '\0') return fallback;
  return std::chrono::milliseconds(ms);
}

}  // namespace

Progress::Progress(std::FILE* out, bool enabled, std::chrono::milliseconds delay)
    : out_(out), enabled_(enabled), delay_(delay_from_env(delay)) {
  if (enabled_) ticker_ = std::thread([this] { tick_loop(); });
}

Progress Progress::for_stderr() { return Progress(stderr, isatty(fileno(stderr)) == 1); }

Progress::~Progress() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    erase_locked();
  }
  wake_.notify_all();
  ticker_.join();
}

void Progress::phase(const std::string& label) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  erase_locked();
  // A line that wraps could not be erased by "\r": keep the label short (a long path keeps its
  // end, the file name).
  constexpr size_t kMaxLabel = 40;
  label_ = label.size() <= kMaxLabel ? label : "..." + label.substr(label.size() - (kMaxLabel - 3));
  fraction_.reset();
  active_ = true;
  started_ = std::chrono::steady_clock::now();
}

void Progress::set_fraction(double fraction) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  fraction_ = fraction;
}

void Progress::done() {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  erase_locked();
  active_ = false;
}

void Progress::erase_locked() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);  // carriage return, erase to the end of the line
  std::fflush(out_);
  drawn_ = false;
}

void Progress::tick_loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (stop_ || !active_) continue;
    const auto elapsed = std::chrono::steady_clock::now() - started_;
    if (elapsed < delay_) continue;
    const std::string line = format_progress_line(
        label_, fraction_, std::chrono::duration<double>(elapsed).count());
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    std::fflush(out_);
    drawn_ = true;
  }
}

}  // namespace tprop::cli
