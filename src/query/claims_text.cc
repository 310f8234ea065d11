// Numbers in text: the claims of `check-claims` and the numbers the report writes in its titles
// and notes (claims.h).
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>

#include "base/strings.h"
#include "query/claims.h"

namespace sightline {
namespace {

struct UnitDef {
  const char* text;
  Dimension dim;
  double scale;      // to base units
  double scale_alt;  // KB, MB, GB, TB: 1000^k or 1024^k, whichever the writer meant
  bool attached;     // only directly after the number ("3.2x")
};

// Longest first where one is a prefix of another.
const UnitDef kUnits[] = {
    {"GB/s", Dimension::kBandwidth, 1, 1, false},
    {"TB/s", Dimension::kBandwidth, 1e3, 1e3, false},
    {"MB/s", Dimension::kBandwidth, 1e-3, 1e-3, false},
    {"seconds", Dimension::kTime, 1e9, 1e9, false},
    {"sec", Dimension::kTime, 1e9, 1e9, false},
    {"ns", Dimension::kTime, 1, 1, false},
    {"us", Dimension::kTime, 1e3, 1e3, false},
    {"\xC2\xB5s", Dimension::kTime, 1e3, 1e3, false},  // µs (micro sign)
    {"\xCE\xBCs", Dimension::kTime, 1e3, 1e3, false},  // μs (Greek mu)
    {"ms", Dimension::kTime, 1e6, 1e6, false},
    {"s", Dimension::kTime, 1e9, 1e9, false},
    {"%", Dimension::kPercent, 1, 1, false},
    {"KiB", Dimension::kBytes, 1024.0, 1024.0, false},
    {"MiB", Dimension::kBytes, 1048576.0, 1048576.0, false},
    {"GiB", Dimension::kBytes, 1073741824.0, 1073741824.0, false},
    {"TiB", Dimension::kBytes, 1099511627776.0, 1099511627776.0, false},
    {"KB", Dimension::kBytes, 1e3, 1024.0, false},
    {"kB", Dimension::kBytes, 1e3, 1024.0, false},
    {"MB", Dimension::kBytes, 1e6, 1048576.0, false},
    {"GB", Dimension::kBytes, 1e9, 1073741824.0, false},
    {"TB", Dimension::kBytes, 1e12, 1099511627776.0, false},
    {"bytes", Dimension::kBytes, 1, 1, false},
    {"B", Dimension::kBytes, 1, 1, false},
    {"x", Dimension::kRatio, 1, 1, true},
    {"\xC3\x97", Dimension::kRatio, 1, 1, true},  // ×
};

bool IsWordChar(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Found {
  size_t begin = 0, end = 0;  // of the number and its unit in the text
  Quantity q;
};

// Reads the number at text[i] (a digit not inside a name) with its unit; false when it is part of
// a name or not a claim.
bool ReadNumber(std::string_view text, size_t i, Found* out, size_t* next) {
  size_t j = i;
  std::string digits;
  int decimals = -1;
  while (j < text.size()) {
    if (IsDigit(text[j])) {
      digits += text[j];
      if (decimals >= 0) ++decimals;
      ++j;
    } else if (text[j] == ',' && decimals < 0 && !digits.empty() && j + 3 < text.size() &&
               IsDigit(text[j + 1]) && IsDigit(text[j + 2]) && IsDigit(text[j + 3]) &&
               (j + 4 >= text.size() || !IsDigit(text[j + 4]))) {
      j += 1;  // a thousands separator: ",ddd"
    } else if (text[j] == '.' && decimals < 0 && j + 1 < text.size() && IsDigit(text[j + 1])) {
      digits += '.';
      decimals = 0;
      ++j;
    } else {
      break;
    }
  }
  *next = j;
  // A unit, after at most one space (or a no-break space).
  size_t k = j;
  bool spaced = false;
  if (k < text.size() && text[k] == ' ') {
    ++k;
    spaced = true;
  } else if (text.substr(k, 2) == "\xC2\xA0") {
    k += 2;
    spaced = true;
  } else if (text.substr(k, 3) == "\xE2\x80\xAF") {
    k += 3;
    spaced = true;
  }
  const UnitDef* unit = nullptr;
  for (const UnitDef& u : kUnits) {
    const std::string_view t = u.text;
    if (u.attached && spaced) continue;
    if (text.substr(k, t.size()) != t) continue;
    const size_t after = k + t.size();
    const bool boundary =
        after >= text.size() || t == "%" || !IsWordChar(static_cast<unsigned char>(text[after]));
    if (!boundary) continue;
    unit = &u;
    k = after;
    break;
  }
  if (unit == nullptr) {
    // Directly followed by a letter or '_': part of a name (4x1_v, 90a, 3rd).
    if (j < text.size() && IsWordChar(static_cast<unsigned char>(text[j]))) return false;
    k = j;
  }
  const double value = std::strtod(digits.c_str(), nullptr);
  const double half = 0.5 * std::pow(10.0, -(decimals < 0 ? 0 : decimals));
  Quantity q;
  q.dim = unit ? unit->dim : Dimension::kCount;
  const double s = unit ? unit->scale : 1, s2 = unit ? unit->scale_alt : 1;
  q.value = value * s;
  q.lo = (value - half) * std::min(s, s2);
  q.hi = (value + half) * std::max(s, s2);
  out->begin = i;
  out->end = k;
  out->q = q;
  *next = k;
  return true;
}

// Every number of `text` not inside a name, with its unit.
std::vector<Found> FindNumbers(std::string_view text) {
  std::vector<Found> found;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsDigit(text[i])) {
      ++i;
      continue;
    }
    // Inside a name or a version: after a letter, '_', '#', '.', or a '-' that follows one.
    const unsigned char prev = i > 0 ? static_cast<unsigned char>(text[i - 1]) : ' ';
    const bool in_name =
        IsWordChar(prev) || prev == '#' || prev == '.' ||
        (prev == '-' && i > 1 && IsWordChar(static_cast<unsigned char>(text[i - 2])));
    size_t next = i;
    Found f;
    if (!ReadNumber(text, i, &f, &next) || in_name) {
      // Skip the rest of the token.
      i = std::max(next, i + 1);
      while (i < text.size() && (IsWordChar(static_cast<unsigned char>(text[i])) || text[i] == '.'))
        ++i;
      continue;
    }
    found.push_back(f);
    i = std::max(next, i + 1);
  }
  return found;
}

bool IsEnd(std::string_view text, size_t i) {
  const char c = text[i];
  if (c == '\n' || c == ';') return true;
  if (c == '.' || c == '!' || c == '?')
    return i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n';
  return false;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words;
  std::string w;
  for (size_t i = 0; i <= s.size(); ++i) {
    const unsigned char c = i < s.size() ? static_cast<unsigned char>(s[i]) : ' ';
    if (std::isalpha(c) || c == '_' || (std::isdigit(c) && !w.empty())) {
      w += static_cast<char>(std::tolower(c));
    } else {
      if (w.size() > 1) words.push_back(w);
      w.clear();
    }
  }
  return words;
}

}  // namespace

const char* DimensionName(Dimension d) {
  switch (d) {
    case Dimension::kTime:
      return "time";
    case Dimension::kPercent:
      return "percent";
    case Dimension::kBytes:
      return "bytes";
    case Dimension::kBandwidth:
      return "bandwidth";
    case Dimension::kRatio:
      return "ratio";
    case Dimension::kCount:
      return "count";
  }
  return "count";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kSupported:
      return "supported";
    case Verdict::kContradicted:
      return "contradicted";
    case Verdict::kUnsupported:
      return "unsupported";
  }
  return "unsupported";
}

std::vector<Quantity> NumbersIn(std::string_view text) {
  std::vector<Quantity> out;
  for (const Found& f : FindNumbers(text)) out.push_back(f.q);
  return out;
}

std::vector<Claim> ExtractClaims(std::string_view text) {
  std::vector<Claim> claims;
  for (const Found& f : FindNumbers(text)) {
    const std::string_view written = text.substr(f.begin, f.end - f.begin);
    // A plain number of one digit is more often a step, a rank or a list's item than a figure.
    if (f.q.dim == Dimension::kCount && written.size() < 2) continue;
    Claim c;
    c.text = std::string(written);
    c.q = f.q;
    c.line = 1;
    for (size_t i = 0; i < f.begin; ++i) c.line += text[i] == '\n';
    // "~", "about", ... before it: within 5%.
    size_t b = f.begin;
    while (b > 0 && text[b - 1] == ' ') --b;
    const std::string before = Lower(text.substr(b >= 14 ? b - 14 : 0, b >= 14 ? 14 : b));
    for (const char* hedge :
         {"~", "about", "around", "roughly", "approximately", "approx.", "nearly"}) {
      const std::string h = hedge;
      if (before.size() >= h.size() && before.compare(before.size() - h.size(), h.size(), h) == 0) {
        c.q.lo = std::min(c.q.lo, c.q.value * 0.95);
        c.q.hi = std::max(c.q.hi, c.q.value * 1.05);
      }
    }
    size_t s = f.begin;
    while (s > 0 && !IsEnd(text, s - 1)) --s;
    size_t e = f.end;
    while (e < text.size() && !IsEnd(text, e)) ++e;
    c.sentence = Lower(text.substr(s, e - s));
    c.context = Words(c.sentence);
    claims.push_back(std::move(c));
  }
  return claims;
}

std::string FormatQuantity(const Quantity& q) {
  const double v = q.value;
  switch (q.dim) {
    case Dimension::kTime:
      if (std::fabs(v) < 1e3) return fmt::format("{:.0f} ns", v);
      if (std::fabs(v) < 1e6) return fmt::format("{:.2f} \xC2\xB5s", v / 1e3);
      if (std::fabs(v) < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
      return fmt::format("{:.3f} s", v / 1e9);
    case Dimension::kPercent:
      return fmt::format("{:.2f}%", v);
    case Dimension::kBytes:
      if (std::fabs(v) >= 1073741824.0) return fmt::format("{:.2f} GiB", v / 1073741824.0);
      if (std::fabs(v) >= 1048576.0) return fmt::format("{:.2f} MiB", v / 1048576.0);
      if (std::fabs(v) >= 1024.0) return fmt::format("{:.2f} KiB", v / 1024.0);
      return fmt::format("{:.0f} B", v);
    case Dimension::kBandwidth:
      return fmt::format("{:.1f} GB/s", v);
    case Dimension::kRatio:
      return fmt::format("{:.2f}x", v);
    case Dimension::kCount:
      if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
      return fmt::format("{:.4g}", v);
  }
  return fmt::format("{}", v);
}

}  // namespace sightline
