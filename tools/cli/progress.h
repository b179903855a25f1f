// Progress of a batch on the terminal: on a TTY, one line redrawn in place with '\r'
// (a bar, done/total, runs per second, time left); otherwise (a log, a pipe) a plain line every
// tenth of the batch or every 10 seconds, whichever comes first. CLI-side: it writes to the
// stream it is given.
//
// Thread-safety: one object belongs to one thread (the batch's writer).
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace fleetcast::cli {

class ProgressMeter {
 public:
  /// `already_done` runs were done before this process started (resumed); the rate counts only
  /// the runs done since.
  ProgressMeter(std::ostream& out, bool terminal, std::size_t total, std::size_t already_done);

  /// `done` runs of `total` are finished now.
  void update(std::size_t done);
  /// Ends the display (a newline after the bar on a TTY).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string line(std::size_t done) const;

  std::ostream& out_;
  bool terminal_;
  std::size_t total_;
  std::size_t start_done_;
  std::size_t last_printed_;
  Clock::time_point started_;
  Clock::time_point last_print_;
  bool drawn_ = false;
};

}  // namespace fleetcast::cli
