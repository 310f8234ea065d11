#include "importers/own_outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace sightline {
namespace {

std::string_view SkipSpace(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// `"key"` then optional blanks, ':' and blanks: the rest after them; empty when s does not start
// so.
std::string_view AfterKey(std::string_view s, std::string_view key) {
  s = SkipSpace(s);
  if (!s.starts_with(key)) return {};
  s = SkipSpace(s.substr(key.size()));
  if (!s.starts_with(':')) return {};
  return SkipSpace(s.substr(1));
}

}  // namespace

bool LooksLikeSightlineReport(std::string_view head) {
  if (head.starts_with("Sightline ")) {
    const std::string_view line = head.substr(0, head.find('\n'));
    return line.ends_with(" report") && line.size() < 64;
  }
  if (head.starts_with("<!DOCTYPE html>")) {
    return head.substr(0, 2048).find("<title>Sightline report") != std::string_view::npos;
  }
  // {"schema_version": N, "tool": {"name": "sightline", ...
  std::string_view s = SkipSpace(head);
  if (!s.starts_with('{')) return false;
  s = AfterKey(s.substr(1), "\"schema_version\"");
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return false;
  s = SkipSpace(s.substr(digits));
  if (!s.starts_with(',')) return false;
  s = AfterKey(s.substr(1), "\"tool\"");
  if (!s.starts_with('{')) return false;
  s = AfterKey(s.substr(1), "\"name\"");
  return s.starts_with("\"sightline\"");
}

bool IsSightlineReport(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char buf[2048];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  return n > 0 && LooksLikeSightlineReport(std::string_view(buf, static_cast<size_t>(n)));
}

}  // namespace sightline
