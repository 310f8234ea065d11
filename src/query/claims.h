// `sightline check-claims REPORT.json TEXT` (docs/check-claims.md): every number a text states
// about a run, matched to the numbers the run's report (and, optionally, query results) holds.
//
// A number is read with its unit (ns, us/µs, ms, s; %; B, KB/KiB, MB/MiB, GB/GiB, TB/TiB; GB/s;
// x) and the rounding of how it is written: "12.4%" stands for [12.35, 12.45), "12.39%" for
// [12.385, 12.395), "41 ms" for [40.5, 41.5) ms; "~", "about", "around", "roughly" and
// "approximately" before it widen that to 5%. It is *supported* when a number of the report of the
// same dimension lies in that interval (a fact, a table cell, a finding's evidence, or a number
// the report writes in a title or note with its own rounding); *contradicted* when no number does
// but a number of the same dimension is about the same thing (its row's name is in the sentence,
// or two words of its key, label, table or section are); *unsupported* otherwise. Each answer
// names the closest number of the report and where it is (section, table, row, column).
// Numbers inside names (layer_7, sm_90, H100, ProfilerStep#3) are not claims.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

enum class Dimension { kTime, kPercent, kBytes, kBandwidth, kRatio, kCount };
const char* DimensionName(Dimension d);

// A number with its dimension, in base units (ns, %, bytes, GB/s, ratio, count), and the interval
// its writing stands for.
struct Quantity {
  Dimension dim = Dimension::kCount;
  double value = 0, lo = 0, hi = 0;
};

// A number of the report, and where it is.
struct ReportNumber {
  Quantity q;
  std::string source;  // "section kernel_summary (input 0), table kernels, row 0, ..."
  std::vector<std::string> key_words;  // lower-case words of its key, label or column
  std::vector<std::string> words;      // ... of its table and section (or finding's rule)
  std::vector<std::string>
      names;               // the text cells of its row (kernel names, range names), lower-case
  bool from_text = false;  // written in a title or note (its interval is its rounding)
};

struct Claim {
  std::string text;  // as written: "12.4%"
  int line = 0;      // 1-based
  Quantity q;
  std::vector<std::string> context;  // lower-case words of its sentence
  std::string sentence;              // lower-case sentence, for names
};

enum class Verdict { kSupported, kContradicted, kUnsupported };
const char* VerdictName(Verdict v);

struct ClaimCheck {
  Claim claim;
  Verdict verdict = Verdict::kUnsupported;
  const ReportNumber* match = nullptr;    // supported: the number that backs it
  const ReportNumber* closest = nullptr;  // otherwise: the closest number of its dimension
};

// The claims of `text`: every number with a unit, and every plain number of 2 or more digits that
// is not part of a name (a lone "3" is more often a rank or a step than a figure).
std::vector<Claim> ExtractClaims(std::string_view text);
// The numbers of `text` written in the report itself (titles, notes, where), each with its own
// rounding.
std::vector<Quantity> NumbersIn(std::string_view text);

// Every number of a report JSON (`sightline analyze --format json`; InvalidInput naming `path`
// when it is not one) and of query results (`sightline query --format json`).
StatusOr<std::vector<ReportNumber>> ReportNumbers(std::string_view json, const std::string& path);
StatusOr<std::vector<ReportNumber>> QueryResultNumbers(std::string_view json,
                                                       const std::string& path);

std::vector<ClaimCheck> CheckClaims(const std::vector<Claim>& claims,
                                    const std::vector<ReportNumber>& numbers);

// "ms"-style rendering of a quantity for messages: "41.40 ms", "12.04%", "1.50 GiB", "1,088".
std::string FormatQuantity(const Quantity& q);

}  // namespace sightline
