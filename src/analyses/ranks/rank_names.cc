// Where a rank's number and host come from when the trace does not say: the file names (ranks.h).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "analyses/ranks/ranks.h"

namespace sightline {
namespace {

// Reads digits at s[i..]; -1 when there are none.
int32_t DigitsAt(const std::string& s, size_t i) {
  int64_t v = -1;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = (v < 0 ? 0 : v) * 10 + (s[i] - '0');
    if (v > INT32_MAX) return -1;
  }
  return static_cast<int32_t>(v);
}

}  // namespace

const char* RankSourceName(RankSource source) {
  switch (source) {
    case RankSource::kTrace:
      return "trace";
    case RankSource::kFileName:
      return "file name";
    case RankSource::kOrder:
      return "order";
  }
  return "order";
}

int32_t RankFromFileName(const std::string& file_name) {
  std::string s;
  for (char ch : file_name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // "rank3", "rank_3", "rank-3", "rank.3": the last such mention wins (directories come first).
  int32_t rank = -1;
  for (size_t p = s.find("rank"); p != std::string::npos; p = s.find("rank", p + 1)) {
    size_t i = p + 4;
    if (i < s.size() && (s[i] == '_' || s[i] == '-' || s[i] == '.')) ++i;
    const int32_t r = DigitsAt(s, i);
    if (r >= 0) rank = r;
  }
  if (rank >= 0) return rank;
  // "-r3" / "_r3" / ".r3" followed by a separator or the end: short forms some launchers write.
  for (size_t p = 0; p + 2 < s.size(); ++p) {
    if ((s[p] != '-' && s[p] != '_' && s[p] != '.') || s[p + 1] != 'r') continue;
    size_t i = p + 2;
    const int32_t r = DigitsAt(s, i);
    if (r < 0) continue;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == s.size() || s[i] == '.' || s[i] == '_' || s[i] == '-') rank = r;
  }
  return rank;
}

const char* HostSourceName(HostSource source) {
  switch (source) {
    case HostSource::kOption:
      return "--ranks-per-host";
    case HostSource::kTrace:
      return "trace";
    case HostSource::kFileName:
      return "file name";
    case HostSource::kNone:
      return "none";
  }
  return "none";
}

std::string HostFromFileName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  constexpr std::string_view kSuffix = ".pt.trace.json";
  if (!name.ends_with(kSuffix)) return "";
  name.resize(name.size() - kSuffix.size());
  // "{worker}.{time}": the time is digits (ms or ns since the epoch, by PyTorch version).
  auto all_digits = [](std::string_view v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || !all_digits(std::string_view(name).substr(dot + 1))) return "";
  // The default worker name "{hostname}_{pid}" (a host name may hold dots, not underscores).
  const std::string worker = name.substr(0, dot);
  const size_t under = worker.rfind('_');
  if (under == std::string::npos || under == 0 ||
      !all_digits(std::string_view(worker).substr(under + 1))) {
    return "";
  }
  return worker.substr(0, under);
}

}  // namespace sightline
