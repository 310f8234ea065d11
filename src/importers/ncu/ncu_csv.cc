// Nsight Compute CSV: find the table (the first line starting with "ID"), tell the page by its
// header, and group rows into kernels by result ID. Columns are found by name, so exports of
// other ncu versions with extra or reordered columns still read.
#include "importers/ncu/ncu_csv.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "base/csv.h"
#include "base/file_io.h"
#include "base/input_data.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

// Offset of the table's header line: the first line that starts with "ID" (quoted or not).
size_t FindTable(std::string_view text, int64_t& lines_before) {
  size_t pos = 0;
  lines_before = 0;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    if (rest.starts_with("\"ID\",") || rest.starts_with("ID,")) return pos;
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++lines_before;
  }
  return std::string_view::npos;
}

std::string FirstLineWith(std::string_view text, std::string_view needle) {
  const size_t at = text.find(needle);
  if (at == std::string_view::npos) return "";
  const size_t end = text.find('\n', at);
  std::string line(text.substr(at, end == std::string_view::npos ? end : end - at));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

class Columns {
 public:
  explicit Columns(const CsvRow& header) {
    for (size_t i = 0; i < header.size(); ++i) index_.emplace(header[i], i);
  }
  int Of(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : static_cast<int>(it->second);
  }

 private:
  std::unordered_map<std::string, size_t> index_;
};

std::string Cell(const CsvRow& row, int col) {
  return col >= 0 && static_cast<size_t>(col) < row.size() ? row[col] : std::string();
}

std::string ShortNcuName(const std::string& name) {
  // ncu prints anonymous namespaces as "<unnamed>", which would read as template arguments.
  std::string n = name;
  for (size_t at = n.find("<unnamed>"); at != std::string::npos; at = n.find("<unnamed>", at)) {
    n.replace(at, 9, "(anonymous namespace)");
  }
  return ShortKernelName(n);
}

struct KernelColumns {
  int id, name, block, grid, device, cc, process, stream;
  explicit KernelColumns(const Columns& c)
      : id(c.Of("ID")),
        name(c.Of("Kernel Name")),
        block(c.Of("Block Size")),
        grid(c.Of("Grid Size")),
        device(c.Of("Device")),
        cc(c.Of("CC")),
        process(c.Of("Process Name")),
        stream(c.Of("Stream")) {}
  void Fill(const CsvRow& row, NcuKernel& k) const {
    // ncu's result ID; -1 (unknown) when the cell is absent or not a non-negative integer ("n/a",
    // an edited file): never a cast of NaN.
    const double v = NcuNumber(Cell(row, id));
    k.id = v >= 0 && v < 9e18 && v == std::floor(v) ? static_cast<int64_t>(v) : -1;
    k.name = Cell(row, name);
    k.short_name = ShortNcuName(k.name);
    k.block_size = Cell(row, block);
    k.grid_size = Cell(row, grid);
    k.device = Cell(row, device);
    k.cc = Cell(row, cc);
    k.process_name = Cell(row, process);
    k.stream = Cell(row, stream);
  }
};

Status ReadDetails(const std::vector<CsvRow>& rows, const std::string& path, NcuExport& out) {
  const Columns c(rows[0]);
  const KernelColumns kc(c);
  const int section = c.Of("Section Name"), metric = c.Of("Metric Name"),
            unit = c.Of("Metric Unit"), value = c.Of("Metric Value"), rule = c.Of("Rule Name"),
            rule_type = c.Of("Rule Type"), rule_text = c.Of("Rule Description"),
            speedup_type = c.Of("Estimated Speedup Type"), speedup = c.Of("Estimated Speedup");
  std::map<std::string, size_t> by_id;
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    if (row.size() == 1 && row[0].empty()) continue;  // blank line
    if (row.size() < rows[0].size() && !row.empty() && row[0].starts_with("==")) {
      ++out.lines_skipped;  // an ncu message line after the table
      continue;
    }
    // ncu leaves out the rule columns of rows that carry no rule result.
    if (row.size() > rows[0].size() || static_cast<int>(row.size()) <= std::max(metric, kc.name)) {
      return InvalidInputError(path + ": row " + std::to_string(r + 1) + " of the ncu table has " +
                               std::to_string(row.size()) + " fields, the header " +
                               std::to_string(rows[0].size()) + " (file cut short or edited?)");
    }
    const std::string id = Cell(row, kc.id);
    auto [it, inserted] = by_id.emplace(id, out.kernels.size());
    if (inserted) kc.Fill(row, out.kernels.emplace_back());
    NcuKernel& k = out.kernels[it->second];
    if (!Cell(row, metric).empty()) {
      k.metrics.push_back(
          {Cell(row, section), Cell(row, metric), Cell(row, unit), Cell(row, value)});
    }
    if (!Cell(row, rule).empty()) {
      NcuRule& x = k.rules.emplace_back();
      x.section = Cell(row, section);
      x.name = Cell(row, rule);
      x.type = Cell(row, rule_type);
      x.description = Cell(row, rule_text);
      x.speedup_type = Cell(row, speedup_type);
      x.speedup_pct = NcuNumber(Cell(row, speedup));
    }
  }
  return Status::Ok();
}

Status ReadRaw(const std::vector<CsvRow>& rows, const std::string& path, NcuExport& out) {
  const CsvRow& header = rows[0];
  const Columns c(header);
  const KernelColumns kc(c);
  // Columns before the first metric are the kernel's identity ("ID" .. "CC").
  const int first_metric = std::max(kc.cc, kc.device) + 1;
  size_t r = 1;
  CsvRow units;
  if (r < rows.size() && !rows[r].empty() && rows[r][0].empty()) units = rows[r++];
  for (; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    if (row.size() == 1 && row[0].empty()) continue;
    if (row.size() < header.size() && !row.empty() && row[0].starts_with("==")) {
      ++out.lines_skipped;
      continue;
    }
    if (row.size() != header.size()) {
      return InvalidInputError(path + ": row " + std::to_string(r + 1) + " of the ncu table has " +
                               std::to_string(row.size()) + " fields, the header " +
                               std::to_string(header.size()) + " (file cut short or edited?)");
    }
    NcuKernel& k = out.kernels.emplace_back();
    kc.Fill(row, k);
    for (size_t i = static_cast<size_t>(first_metric); i < header.size(); ++i) {
      if (row[i].empty()) continue;
      k.metrics.push_back({"", header[i], i < units.size() ? units[i] : "", row[i]});
    }
  }
  return Status::Ok();
}

}  // namespace

const NcuMetric* NcuKernel::Find(std::string_view metric_name, std::string_view section) const {
  for (const NcuMetric& m : metrics) {
    if (m.name == metric_name && (section.empty() || m.section == section)) return &m;
  }
  return nullptr;
}

double NcuNumber(std::string_view value) {
  std::string s;
  for (char c : value) {
    if (c != ',' && c != ' ') s.push_back(c);
  }
  if (s.empty()) return std::nan("");
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  // Not a number, or not a finite one ("inf", "nan", 1e999): absent, never an inf% in a report.
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v)) return std::nan("");
  return v;
}

double NcuUnitScale(std::string_view unit) {
  std::string_view u = unit;
  for (std::string_view suffix : {"/block", "/s", "/second"}) {
    if (u.ends_with(suffix)) u.remove_suffix(suffix.size());
  }
  if (u == "nsecond" || u == "ns") return 1;
  if (u == "usecond" || u == "us") return 1e3;
  if (u == "msecond" || u == "ms") return 1e6;
  if (u == "second" || u == "s") return 1e9;
  for (std::string_view base : {"byte", "hz", "Hz"}) {
    if (!u.ends_with(base)) continue;
    const std::string_view prefix = u.substr(0, u.size() - base.size());
    if (prefix.empty()) return 1;
    if (prefix == "K" || prefix == "k") return 1e3;
    if (prefix == "M") return 1e6;
    if (prefix == "G" || prefix == "g") return 1e9;
    if (prefix == "T") return 1e12;
    if (prefix == "P") return 1e15;
    return std::nan("");
  }
  return 1;
}

StatusOr<NcuExport> ParseNcuCsv(std::string_view text, const std::string& path) {
  NcuExport out;
  out.path = path;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  const size_t start = FindTable(text, out.lines_skipped);
  if (start == std::string_view::npos) {
    std::string hint;
    if (std::string e = FirstLineWith(text, "==ERROR=="); !e.empty()) {
      hint = "; ncu reported: " + e;
    } else if (text.starts_with("SQLite format 3")) {
      hint = "; this is an SQLite file (nsys export?): use `sightline analyze`";
    } else if (text.find("==PROF==") != std::string_view::npos) {
      hint = "; ncu ran but printed no table (no kernel matched the filters?)";
    }
    return InvalidInputError(path +
                             ": not an Nsight Compute CSV export (no table header starting with "
                             "\"ID\"); export with `ncu --csv --page details` or `--page raw`" +
                             hint);
  }
  StatusOr<std::vector<CsvRow>> rows = ParseCsv(text.substr(start));
  if (!rows.ok()) return rows.status().WithPrefix(path);
  const CsvRow& header = (*rows)[0];
  const Columns c(header);
  if (c.Of("Kernel Name") < 0) {
    return InvalidInputError(path +
                             ": the ncu table has no \"Kernel Name\" column; export the "
                             "details or raw page (--page details|raw)");
  }
  const bool details = c.Of("Metric Name") >= 0 && c.Of("Metric Value") >= 0;
  out.page = details ? NcuPage::kDetails : NcuPage::kRaw;
  RETURN_IF_ERROR(details ? ReadDetails(*rows, path, out) : ReadRaw(*rows, path, out));
  if (out.kernels.empty()) {
    return InvalidInputError(path + ": the ncu table lists no kernel");
  }
  return out;
}

StatusOr<NcuExport> ReadNcuCsv(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  if (bytes.empty()) return InvalidInputError(path + ": the file is empty");
  return ParseNcuCsv(bytes, path);
}

}  // namespace sightline
