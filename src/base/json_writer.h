// A small streaming JSON writer (simdjson only parses). Produces compact or indented UTF-8 JSON;
// strings are escaped, invalid UTF-8 bytes are replaced with U+FFFD, non-finite doubles become
// null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sightline {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

  static void AppendEscaped(std::string& out, std::string_view s);

 private:
  void BeforeValue();
  void Newline();

  std::string out_;
  int indent_;
  struct Level {
    bool is_object;
    int count;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace sightline
