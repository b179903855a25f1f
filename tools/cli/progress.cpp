#include "tools/cli/progress.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace fleetcast::cli {

namespace {

/// "1h02m", "3m05s", "42s".
std::string short_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%llds", s);
  }
  return text;
}

}  // namespace

ProgressMeter::ProgressMeter(std::ostream& out, bool terminal, std::size_t total, std::size_t already_done)
    : out_(out),
      terminal_(terminal),
      total_(total),
      start_done_(already_done),
      last_printed_(already_done),
      started_(Clock::now()),
      last_print_(started_) {}

std::string ProgressMeter::line(std::size_t done) const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done - start_done_) / elapsed : 0;
  const std::string left = rate > 0 ? short_duration(static_cast<double>(total_ - done) / rate) : "?";
  char text[160];
  std::snprintf(text, sizeof text, "%zu/%zu runs (%.0f%%), %.1f runs/s, %s left", done, total_,
                total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total_), rate,
                left.c_str());
  return text;
}

void ProgressMeter::update(std::size_t done) {
  const auto now = Clock::now();
  if (terminal_) {
    // Redraw at most ten times a second, and always at the end.
    if (done != total_ && drawn_ && now - last_print_ < std::chrono::milliseconds(100)) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ == 0 ? kWidth : kWidth * done / total_;
    out_ << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << line(done) << "\033[K"
         << std::flush;
    drawn_ = true;
  } else {
    const std::size_t step = std::max<std::size_t>(1, total_ / 10);
    if (done != total_ && done - last_printed_ < step && now - last_print_ < std::chrono::seconds(10)) return;
    if (done == last_printed_ && drawn_) return;
    out_ << "progress: " << line(done) << "\n" << std::flush;
    last_printed_ = done;
    drawn_ = true;
  }
  last_print_ = now;
}

void ProgressMeter::finish() {
  if (terminal_ && drawn_) out_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace fleetcast::cli
