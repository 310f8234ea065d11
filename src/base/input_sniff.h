// What a reader of inputs says of itself to the front door (importers/inputs.h), declared in its
// own folder beside its sniffer: its name, one line on what it reads, and its place in the
// sniffing order. The front door pairs each with its kind of document and its read, and tries the
// sniffers by priority, lowest first: the specific before the general (binary magic numbers, then
// text with a fixed start, then JSON recognised by its keys, then logs).
#pragma once

#include <string_view>

namespace sightline {

struct ReaderSpec {
  const char* name;         // "nsys-sqlite", "vllm-bench-results", ...
  const char* description;  // one line, for --help, `sightline formats` and errors
  // Where its sniffer comes in the order: lower first. A sniffer that could take another
  // format's files comes after that format's (the comment at each spec says which).
  int priority;
  // True when the first bytes of the content (decompressed, up to kInputHeadBytes) are this
  // format.
  bool (*sniff)(std::string_view head);
};

// `head` less a UTF-8 byte-order mark and leading white space: where a text format's sniffer
// looks first.
inline std::string_view SkipBomAndSpace(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  const size_t i = head.find_first_not_of(" \t\r\n");
  return i == std::string_view::npos ? std::string_view() : head.substr(i);
}

}  // namespace sightline
