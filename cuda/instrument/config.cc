#include "config.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "shared/recorder_env.h"

namespace sightline::instrument {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A non-negative decimal integer that fits in int64 (at most 18 digits keeps it simple).
bool ParseNonNegative(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Splits "A-B" or "A" into two numbers. `what` names the item in the error.
bool ParseItem(std::string_view item, int64_t* a, int64_t* b, std::string* error) {
  const std::string_view trimmed = Trim(item);
  const size_t dash = trimmed.find('-');
  if (dash == std::string_view::npos) {
    if (!ParseNonNegative(trimmed, a)) {
      *error = "'" + std::string(trimmed) + "' is not an iteration number or a range A-B";
      return false;
    }
    *b = *a;
    return true;
  }
  const std::string_view left = Trim(trimmed.substr(0, dash));
  const std::string_view right = Trim(trimmed.substr(dash + 1));
  if (!ParseNonNegative(left, a) || !ParseNonNegative(right, b)) {
    *error = "'" + std::string(trimmed) + "' is not a range A-B of non-negative integers";
    return false;
  }
  if (*b < *a) {
    *error = "range '" + std::string(trimmed) + "' ends before it starts";
    return false;
  }
  return true;
}

template <typename Fn>
bool ForEachItem(std::string_view spec, Fn fn, std::string* error) {
  if (Trim(spec).empty()) {
    *error = "the value is empty";
    return false;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view item = spec.substr(pos, comma - pos);
    if (Trim(item).empty()) {
      *error = "empty item at character " + std::to_string(pos + 1);
      return false;
    }
    if (!fn(item)) return false;
    pos = comma + 1;
  }
  return true;
}

}  // namespace

bool ParseWindowSpec(std::string_view spec, std::vector<WindowRange>* ranges, std::string* error) {
  ranges->clear();
  std::vector<WindowRange> out;
  const bool ok = ForEachItem(
      spec,
      [&](std::string_view item) {
        WindowRange r;
        if (!ParseItem(item, &r.start, &r.stop, error)) return false;
        out.push_back(r);
        return true;
      },
      error);
  if (!ok) return false;
  std::sort(out.begin(), out.end(),
            [](const WindowRange& x, const WindowRange& y) { return x.start < y.start; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].start <= out[i - 1].stop) {
      *error = "ranges " + std::to_string(out[i - 1].start) + "-" +
               std::to_string(out[i - 1].stop) + " and " + std::to_string(out[i].start) + "-" +
               std::to_string(out[i].stop) + " overlap";
      return false;
    }
  }
  *ranges = std::move(out);
  return true;
}

bool ParseRankList(std::string_view spec, std::vector<int>* ranks, bool* all, std::string* error) {
  ranks->clear();
  *all = false;
  const std::string_view trimmed = Trim(spec);
  if (trimmed == "all" || trimmed == "*") {
    *all = true;
    return true;
  }
  std::vector<int> out;
  const bool ok = ForEachItem(
      spec,
      [&](std::string_view item) {
        int64_t a = 0, b = 0;
        if (!ParseItem(item, &a, &b, error)) return false;
        if (b > 1'000'000) {
          *error = "rank " + std::to_string(b) + " is out of range";
          return false;
        }
        for (int64_t r = a; r <= b; ++r) out.push_back(static_cast<int>(r));
        return true;
      },
      error);
  if (!ok) return false;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  *ranks = std::move(out);
  return true;
}

bool ParseNvtxLevel(std::string_view text, int* level) {
  const std::string_view t = Trim(text);
  if (t == "0" || t == "off") {
    *level = 0;
  } else if (t == "1" || t == "basic") {
    *level = 1;
  } else if (t == "2" || t == "verbose") {
    *level = 2;
  } else {
    return false;
  }
  return true;
}

std::string ExpandLogPath(std::string_view pattern, int64_t pid, int rank) {
  // The same expansion as `sightline record -o`, so a log and a recording of one process pair up.
  return recenv::ExpandOutputPattern(pattern, pid, rank);
}

}  // namespace sightline::instrument
