#include "log_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace sightline::instrument {

void JsonLine::Key(std::string_view key) {
  if (!first_) text_ += ',';
  first_ = false;
  Quoted(key);
  text_ += ':';
}

void JsonLine::Quoted(std::string_view s) {
  text_ += '"';
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        text_ += "\\\"";
        break;
      case '\\':
        text_ += "\\\\";
        break;
      case '\n':
        text_ += "\\n";
        break;
      case '\r':
        text_ += "\\r";
        break;
      case '\t':
        text_ += "\\t";
        break;
      default:
        if (u < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", u);
          text_ += esc;
        } else {
          text_ += c;
        }
    }
  }
  text_ += '"';
}

void JsonLine::Int(std::string_view key, int64_t value) {
  Key(key);
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(value));
  text_.append(buf, n);
}

void JsonLine::Double(std::string_view key, double value) {
  Key(key);
  if (!std::isfinite(value)) {
    text_ += "null";
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", value);
  text_.append(buf, n);
}

void JsonLine::String(std::string_view key, std::string_view value) {
  Key(key);
  Quoted(value);
}

void JsonLine::Bool(std::string_view key, bool value) {
  Key(key);
  text_ += value ? "true" : "false";
}

void JsonLine::OpenObject(std::string_view key) {
  Key(key);
  text_ += '{';
  first_ = true;
}

bool LogWriter::Open(const std::string& path) {
  Close();
  path_ = path;
  if (path == "stderr") {
    fd_ = STDERR_FILENO;
    owns_fd_ = false;
    line_buffered_ = true;
    return true;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    std::fprintf(stderr, "sightline: cannot open the iteration log '%s': %s; the log is off\n",
                 path.c_str(), std::strerror(errno));
    return false;
  }
  owns_fd_ = true;
  line_buffered_ = false;
  buffer_.reserve(1 << 16);
  return true;
}

void LogWriter::Write(std::string_view line) {
  if (fd_ < 0) return;
  buffer_.append(line);
  if (line_buffered_ || buffer_.size() >= (1u << 16)) Flush();
}

void LogWriter::Flush() {
  if (fd_ < 0 || buffer_.empty()) return;
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      buffer_.clear();
      if (owns_fd_) ::close(fd_);
      fd_ = -1;
      std::fprintf(stderr, "sightline: writing the iteration log '%s' failed: %s; the log is off\n",
                   path_.c_str(), std::strerror(err));
      return;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void LogWriter::Close() {
  Flush();
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
}

}  // namespace sightline::instrument
