// One updating line on standard error for long work (`analyze` of many ranks): shown only when
// stderr is a terminal and not --quiet, first after a short delay, at most a few times a second,
// and erased before anything else is written. Never touches standard output.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sightline {

class ProgressLine {
 public:
  // `enabled` false: every call does nothing. Use ProgressLine::ForStderr(quiet) in the CLI.
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Enabled when stderr is a terminal, TERM is not "dumb", and not `quiet`.
  static ProgressLine ForStderr(bool quiet);

  // Replaces the line with `text` (cut to the terminal's width); throttled, except `force`.
  void Update(const std::string& text, bool force = false);
  // Erases the line (call before writing the report or an error).
  void Clear();
  double elapsed_seconds() const;

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// "3/128 files, 1.2 GB of 40.1 GB read, 0:42 left" from counts so far (time left from the byte
// rate, or the file rate when sizes are unknown; left out until something is done).
std::string FormatFileProgress(size_t files_done, size_t files_total, uint64_t bytes_done,
                               uint64_t bytes_total, double elapsed_seconds);

}  // namespace sightline
