#include "base/progress_line.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/utf8.h"

namespace sightline {
namespace {

constexpr double kFirstAfterSeconds = 0.5;  // short work shows nothing
constexpr double kEverySeconds = 0.1;

std::string Bytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GB", b / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MB", b / double(1ull << 20));
  return fmt::format("{:.0f} kB", b / 1024.0);
}

}  // namespace

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() { Clear(); }

ProgressLine ProgressLine::ForStderr(bool quiet) {
  const char* term = std::getenv("TERM");
  const bool dumb = term != nullptr && std::strcmp(term, "dumb") == 0;
  return ProgressLine(!quiet && !dumb && isatty(STDERR_FILENO) == 1);
}

double ProgressLine::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::Update(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force) {
    if (std::chrono::duration<double>(now - start_).count() < kFirstAfterSeconds) return;
    if (shown_ && std::chrono::duration<double>(now - last_).count() < kEverySeconds) return;
  }
  last_ = now;
  size_t width = 80;
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) width = ws.ws_col;
  // A file name from a directory listing may hold controls: shown, not sent to the terminal.
  std::string line = "sightline: " + PrintableText(text);
  // Never wrap (\r must reach the start), and never cut inside a character.
  if (line.size() >= width) line.resize(Utf8PrefixLength(line, width - 1));
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!enabled_ || !shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

std::string FormatFileProgress(size_t files_done, size_t files_total, uint64_t bytes_done,
                               uint64_t bytes_total, double elapsed_seconds) {
  std::string s = fmt::format("{}/{} files", files_done, files_total);
  if (bytes_total > 0) s += fmt::format(", {} of {} read", Bytes(bytes_done), Bytes(bytes_total));
  double fraction = 0;
  if (bytes_total > 0) {
    fraction = static_cast<double>(bytes_done) / static_cast<double>(bytes_total);
  } else if (files_total > 0) {
    fraction = static_cast<double>(files_done) / static_cast<double>(files_total);
  }
  if (fraction > 0 && fraction < 1) {
    const auto left =
        static_cast<int64_t>(std::lround(elapsed_seconds * (1 - fraction) / fraction));
    s += fmt::format(", {}:{:02d} left", left / 60, left % 60);
  }
  return s;
}

}  // namespace sightline
