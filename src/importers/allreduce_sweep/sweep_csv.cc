// A line-oriented reader: the sweep CSV is plain (no quoting), and line numbers make the errors
// actionable, so it does not go through the general RFC 4180 parser.
#include "importers/allreduce_sweep/sweep_csv.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/lines.h"
#include "shared/ar_names.h"

namespace sightline {

static_assert(static_cast<int>(ArStrategy::kLamport) == 3 &&
              static_cast<int>(ArFusion::kResidualRmsNormNvfp4) == 4);

std::string_view ArStrategyName(ArStrategy s) {
  return allreduce_names::NameAt(allreduce_names::kStrategies, static_cast<int>(s));
}

std::string_view ArStrategyLabel(ArStrategy s) {
  switch (s) {
    case ArStrategy::kNccl:
      return "NCCL";
    case ArStrategy::kOneShot:
      return "one-shot";
    case ArStrategy::kTwoShot:
      return "two-shot";
    case ArStrategy::kLamport:
      return "Lamport";
  }
  return "?";
}

std::string_view ArFusionName(ArFusion f) {
  return allreduce_names::NameAt(allreduce_names::kFusions, static_cast<int>(f));
}

std::string_view ArModeName(ArMode m) { return m == ArMode::kEager ? "eager" : "graph"; }

int ArDtypeBytes(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  return 0;
}

namespace {

constexpr int kColumns = 11;
// Keeps every grid value within int, the type of the generated SelectStrategy's arguments.
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f =
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t')) f.remove_suffix(1);
    out.push_back(f);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

constexpr const char* kColumnNames[kColumns] = {
    "world_size", "dtype", "size_bytes", "num_tokens", "hidden_size", "strategy",
    "fusion",     "mode",  "time_us",    "algbw_gbps", "busbw_gbps"};

class RowParser {
 public:
  RowParser(const std::vector<std::string_view>& fields, std::string where)
      : fields_(fields), where_(std::move(where)) {}

  Status Error(int col, std::string_view problem) const {
    return InvalidInputError(
        fmt::format("{}: column {} ({}): {}", where_, col + 1, kColumnNames[col], problem));
  }

  StatusOr<int64_t> Int(int col, int64_t min) const {
    const std::string_view f = fields_[col];
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (f.empty() || ec != std::errc() || p != f.data() + f.size()) {
      return Error(col, fmt::format("'{}' is not an integer", f));
    }
    if (v < min) return Error(col, fmt::format("{} is below the minimum {}", v, min));
    return v;
  }

  StatusOr<double> Double(int col, bool positive) const {
    const std::string_view f = fields_[col];
    double v = 0;
    const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (f.empty() || ec != std::errc() || p != f.data() + f.size() || !std::isfinite(v)) {
      return Error(col, fmt::format("'{}' is not a finite number", f));
    }
    if (positive ? v <= 0 : v < 0) {
      return Error(col, fmt::format("{} must be {}", f, positive ? "> 0" : ">= 0"));
    }
    return v;
  }

  std::string_view Text(int col) const { return fields_[col]; }

 private:
  const std::vector<std::string_view>& fields_;
  std::string where_;
};

StatusOr<SweepRow> ParseRow(const std::vector<std::string_view>& fields, std::string where) {
  RowParser p(fields, where);
  SweepRow r;
  r.where = std::move(where);
  ASSIGN_OR_RETURN(const int64_t world, p.Int(0, 1));
  if (world > 1 << 20) return p.Error(0, fmt::format("{} ranks is not plausible", world));
  r.world_size = static_cast<int>(world);
  r.dtype = std::string(p.Text(1));
  const int elem = ArDtypeBytes(r.dtype);
  if (elem == 0)
    return p.Error(1, fmt::format("unknown dtype '{}' (expected bf16, fp16 or fp32)", r.dtype));
  ASSIGN_OR_RETURN(r.size_bytes, p.Int(2, 1));
  ASSIGN_OR_RETURN(r.num_tokens, p.Int(3, 0));
  ASSIGN_OR_RETURN(r.hidden_size, p.Int(4, 0));
  const std::string_view strategy = p.Text(5);
  const int strategy_code = allreduce_names::IndexOf(allreduce_names::kStrategies, strategy);
  if (strategy_code < 0) {
    return p.Error(5, fmt::format("unknown strategy '{}' (expected {})", strategy,
                                  allreduce_names::Listed(allreduce_names::kStrategies)));
  }
  r.strategy = static_cast<ArStrategy>(strategy_code);
  const std::string_view fusion = p.Text(6);
  const int fusion_code = allreduce_names::IndexOf(allreduce_names::kFusions, fusion);
  if (fusion_code < 0) {
    return p.Error(6, fmt::format("unknown fusion '{}' (expected {})", fusion,
                                  allreduce_names::Listed(allreduce_names::kFusions)));
  }
  r.fusion = static_cast<ArFusion>(fusion_code);
  const std::string_view mode = p.Text(7);
  if (mode == "eager") {
    r.mode = ArMode::kEager;
  } else if (mode == "graph") {
    r.mode = ArMode::kGraph;
  } else {
    return p.Error(7, fmt::format("unknown mode '{}' (expected eager or graph)", mode));
  }
  ASSIGN_OR_RETURN(r.time_us, p.Double(8, /*positive=*/true));
  ASSIGN_OR_RETURN(r.algbw_gbps, p.Double(9, /*positive=*/false));
  ASSIGN_OR_RETURN(r.busbw_gbps, p.Double(10, /*positive=*/false));

  // Either a 1-D size-sweep row (tokens and hidden both 0) or a 2-D cell (both > 0) whose size
  // is the message it reduces.
  if ((r.num_tokens == 0) != (r.hidden_size == 0)) {
    return p.Error(
        r.num_tokens == 0 ? 3 : 4,
        "num_tokens and hidden_size must both be 0 (size sweep) or both > 0 (2-D sweep)");
  }
  if (r.is_grid()) {
    if (r.num_tokens > kMaxElements / r.hidden_size) {
      return p.Error(3, "num_tokens x hidden_size exceeds 2^31 - 1 elements");
    }
    const int64_t expect = r.num_tokens * r.hidden_size * elem;
    if (r.size_bytes != expect) {
      return p.Error(
          2, fmt::format("{} bytes, but {} tokens x {} hidden x {} bytes ({}) = {}", r.size_bytes,
                         r.num_tokens, r.hidden_size, elem, r.dtype, expect));
    }
  } else if (r.fusion != ArFusion::kNone) {
    return p.Error(6, "a fused row needs num_tokens and hidden_size (RMSNorm is per token)");
  }
  return r;
}

using CellKey = std::tuple<int, std::string, int64_t, int64_t, int64_t, int, int, int>;

CellKey KeyOf(const SweepRow& r) {
  return {r.world_size,
          r.dtype,
          r.size_bytes,
          r.num_tokens,
          r.hidden_size,
          static_cast<int>(r.strategy),
          static_cast<int>(r.fusion),
          static_cast<int>(r.mode)};
}

}  // namespace

Status CheckSweepDuplicates(const std::vector<SweepRow>& rows) {
  std::map<CellKey, const SweepRow*> seen;
  for (const SweepRow& r : rows) {
    auto [it, inserted] = seen.emplace(KeyOf(r), &r);
    if (!inserted) {
      return InvalidInputError(fmt::format(
          "{}: duplicate cell (world_size {}, {}, {} bytes, {} tokens, hidden {}, {}, {}, {}), "
          "already measured at {}; keep one measurement per configuration",
          r.where, r.world_size, r.dtype, r.size_bytes, r.num_tokens, r.hidden_size,
          ArStrategyName(r.strategy), ArFusionName(r.fusion), ArModeName(r.mode),
          it->second->where));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<SweepRow>> ParseSweepCsv(std::string_view text, const std::string& what) {
  std::vector<SweepRow> rows;
  bool header_seen = false;
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const int64_t line_no = lines.number();
    if (line_no == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 BOM
    if (line.find_first_not_of(" \t") == std::string_view::npos || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", what, line_no);
    if (!header_seen) {
      if (line != kSweepCsvHeader) {
        return InvalidInputError(fmt::format(
            "{}: not an all-reduce sweep CSV: the header must be exactly\n  {}\nbut is\n  {}",
            where, kSweepCsvHeader, line.substr(0, 200)));
      }
      header_seen = true;
      continue;
    }
    const std::vector<std::string_view> fields = SplitFields(line);
    if (fields.size() != kColumns) {
      return InvalidInputError(fmt::format("{}: {} columns, expected {} ({})", where, fields.size(),
                                           kColumns, kSweepCsvHeader));
    }
    ASSIGN_OR_RETURN(SweepRow row, ParseRow(fields, where));
    rows.push_back(std::move(row));
  }
  if (!header_seen) {
    return InvalidInputError(
        fmt::format("{}: empty file; expected the sweep CSV header {}", what, kSweepCsvHeader));
  }
  RETURN_IF_ERROR(CheckSweepDuplicates(rows));
  return rows;
}

StatusOr<std::vector<SweepRow>> ReadSweepCsvFiles(const std::vector<std::string>& paths) {
  std::vector<SweepRow> all;
  for (const std::string& path : paths) {
    StatusOr<std::string> text = ReadInput(path);
    if (!text.ok()) return text.status();
    ASSIGN_OR_RETURN(std::vector<SweepRow> rows, ParseSweepCsv(*text, path));
    for (SweepRow& r : rows) all.push_back(std::move(r));
  }
  RETURN_IF_ERROR(CheckSweepDuplicates(all));
  return all;
}

}  // namespace sightline
