// The iteration log's output side: a JSON-object builder for one line and a buffered writer to a
// file descriptor (a file or stderr). No exceptions, no allocation after warm-up beyond the buffer;
// write errors are reported once and turn the log off. Format: docs/formats/iteration-log.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sightline::instrument {

// Appends `"key":value` members to a JSON object kept in a string. Begin() opens it, End() closes
// it and adds the newline.
class JsonLine {
 public:
  void Begin() {
    text_.clear();
    text_ += '{';
    first_ = true;
  }
  void Int(std::string_view key, int64_t value);
  void Double(std::string_view key, double value);  // non-finite values are written as null
  void String(std::string_view key, std::string_view value);
  void Bool(std::string_view key, bool value);
  void OpenObject(std::string_view key);
  void CloseObject() {
    text_ += '}';
    first_ = false;
  }
  void End() { text_ += "}\n"; }
  const std::string& text() const { return text_; }

 private:
  void Key(std::string_view key);
  void Quoted(std::string_view s);
  std::string text_;
  bool first_ = true;
};

// Buffers lines and writes them to `fd` when 64 KiB have gathered, on Flush() and when closed.
// With `line_buffered` (stderr) each line goes out at once.
class LogWriter {
 public:
  LogWriter() = default;
  ~LogWriter() { Close(); }
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Opens `path` for writing (truncates), or stderr when path is "stderr". False with one message
  // on stderr when it cannot.
  bool Open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  void Write(std::string_view line);
  void Flush();
  void Close();

 private:
  int fd_ = -1;
  bool owns_fd_ = false;
  bool line_buffered_ = false;
  std::string path_;
  std::string buffer_;
};

}  // namespace sightline::instrument
