// Reader of Nsight Compute CSV exports: `ncu --csv --page details` (one row per metric or rule
// result of a kernel) and `ncu --csv --page raw` (one row per kernel, one column per metric, a
// units row under the header), from any --set, written by ncu directly (its ==PROF== and warning
// lines before the table are skipped) or by `ncu --import REP --csv`. Optionally gzip'd.
// Maps both pages to one model: kernels with their (section, metric, unit, value) rows and rule
// results. Format notes: docs/kernel/ncu.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

enum class NcuPage { kDetails, kRaw };

struct NcuMetric {
  std::string section;  // details: "GPU Speed Of Light Throughput"; raw: ""
  std::string name;     // details: "Duration"; raw: "gpu__time_duration.sum"
  std::string unit;     // as printed: "us", "Kbyte", "%", "Gbyte/s", "" ...
  std::string value;    // as printed: "53.12", "17,207", "CachePreferNone"
};

// One result of an ncu rule (details page): "OPT"imization hint, "INF"ormation or "WRN"ing.
struct NcuRule {
  std::string section;  // the rule's section identifier, e.g. "Occupancy"
  std::string name;     // e.g. "TheoreticalOccupancy"
  std::string type;     // "OPT", "INF", "WRN", "ERR"
  std::string description;
  std::string speedup_type;           // "global" or "local" (of the kernel's time); "" if none
  double speedup_pct = std::nan("");  // ncu's estimated speedup, % of the kernel's time
};

struct NcuKernel {
  int64_t id = -1;         // ncu's result ID, in profiling order
  std::string name;        // as exported (demangled unless ncu was told otherwise)
  std::string short_name;  // without return type, template arguments and parameters
  std::string block_size;  // "(256, 1, 1)"
  std::string grid_size;
  std::string device;  // "0"
  std::string cc;      // "9.0"
  std::string process_name;
  std::string stream;
  std::vector<NcuMetric> metrics;
  std::vector<NcuRule> rules;

  // The first metric with this name (and this section, when not empty); nullptr when absent.
  const NcuMetric* Find(std::string_view name, std::string_view section = {}) const;
};

struct NcuExport {
  std::string path;
  NcuPage page = NcuPage::kDetails;
  int64_t lines_skipped = 0;  // ncu's own and the application's lines before the table
  std::vector<NcuKernel> kernels;
};

// InvalidInput when no ncu table is found (with what the file looks like instead) or a row is
// malformed; `path` names the file in messages.
StatusOr<NcuExport> ParseNcuCsv(std::string_view text, const std::string& path);

// Reads (and gunzips) the file, then ParseNcuCsv.
StatusOr<NcuExport> ReadNcuCsv(const std::string& path);

// A metric value as a number: "17,207" -> 17207; NaN for "", "n/a", text, and a value that is
// not finite ("inf", "nan", 1e999).
double NcuNumber(std::string_view value);

// Scale from `unit` to the base unit of its kind: "usecond"/"us" -> 1e3 (to ns), "msecond" ->
// 1e6, "Kbyte" -> 1e3 (to bytes; ncu's prefixes are decimal), "Gbyte/s" -> 1e9 (to bytes/s),
// "Kbyte/block" -> 1e3; 1 for units without a prefix; NaN for unknown prefixed units.
double NcuUnitScale(std::string_view unit);

}  // namespace sightline
