// Source-page reader: a small state machine over the CSV rows. "Kernel Name" (sass view) or
// "Function Name" (cuda,sass view) starts a kernel, "File Path" sets the file of the lines that
// follow, a row starting with "Address" or "Line No" is a header (column positions), and the rest
// are data rows. In the cuda,sass view one instruction is listed under every file it was inlined
// from; it is kept once (by address), with the line of the user's file when there is one.
#include "importers/ncu/ncu_source.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "base/csv.h"
#include "importers/ncu/ncu_csv.h"

namespace sightline {
namespace {

// ncu's column suffix -> Sightline's stall key (kernel/ncu_stalls.cc).
constexpr std::pair<std::string_view, std::string_view> kStallColumns[] = {
    {"long_sb", "long_scoreboard"},
    {"short_sb", "short_scoreboard"},
    {"barrier", "barrier"},
    {"membar", "membar"},
    {"mio", "mio_throttle"},
    {"lg", "lg_throttle"},
    {"tex", "tex_throttle"},
    {"math", "math_pipe_throttle"},
    {"wait", "wait"},
    {"dispatch", "dispatch_stall"},
    {"drain", "drain"},
    {"imc", "imc_miss"},
    {"branch_resolving", "branch_resolving"},
    {"no_inst", "no_instruction"},
    {"sleep", "sleeping"},
    {"misc", "misc"},
    {"not_selected", "not_selected"},
    {"selected", "selected"},
    {"gmma", "gmma"},
};

struct Header {
  int line = -1, address = -1, source = -1, sass = -1, samples = -1;
  std::vector<std::pair<int, std::string>> stalls;  // column, key
};

Header ParseHeader(const CsvRow& row) {
  Header h;
  for (int i = 0; i < static_cast<int>(row.size()); ++i) {
    const std::string& c = row[i];
    if (c == "Line No")
      h.line = i;
    else if (c == "Address")
      h.address = i;
    else if (c == "Source")
      (h.address >= 0 && i > h.address ? h.sass : h.source) = i;
    else if (c == "Warp Stall Sampling (All Samples)")
      h.samples = i;
    else if (c.starts_with("stall_") && c.find(' ') == std::string::npos) {
      const std::string_view suffix = std::string_view(c).substr(6);
      for (const auto& [col, key] : kStallColumns) {
        if (suffix == col) h.stalls.emplace_back(i, std::string(key));
      }
    }
  }
  if (h.address >= 0 && h.sass < 0) std::swap(h.sass, h.source);  // sass view: Address, Source
  return h;
}

const std::string& SourceCell(const CsvRow& row, int i) {
  static const std::string kEmpty;
  return i >= 0 && i < static_cast<int>(row.size()) ? row[i] : kEmpty;
}

// A sample count; one that is not a plain count (negative, NaN, beyond 1e12) reads as 0, so that
// sums stay finite and convert to integers (found by fuzz_ncu_csv).
double Count(const CsvRow& row, int i) {
  const double v = NcuNumber(SourceCell(row, i));
  return v >= 0 && v <= 1e12 ? v : 0;
}

void FillStalls(const Header& h, const CsvRow& row, NcuSourceRow& out) {
  for (const auto& [col, key] : h.stalls) {
    const double v = Count(row, col);
    if (v > 0) out.stalls.push_back({key, v});
  }
  std::stable_sort(out.stalls.begin(), out.stalls.end(),
                   [](const auto& a, const auto& b) { return a.samples > b.samples; });
}

bool IsHeaderFile(const std::string& file) {
  return file.find("/cuda/") != std::string::npos || file.find("/include/") != std::string::npos ||
         file.ends_with(".hpp") || file.ends_with(".h");
}

}  // namespace

bool LooksLikeNcuSourceCsv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text.starts_with("\"Kernel Name\"") || text.starts_with("\"File Path\"") ||
         text.starts_with("\"File Name\"") || text.starts_with("\"Function Name\"");
}

double StallSamples(const NcuSourceRow& row, std::string_view reason) {
  for (const NcuSourceStall& s : row.stalls) {
    if (s.reason == reason) return s.samples;
  }
  return 0;
}

StatusOr<NcuSourceExport> ParseNcuSourceCsv(std::string_view text, const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<CsvRow> rows, ParseCsv(text));
  NcuSourceExport out;
  out.path = path;
  out.view = "sass";
  std::string file;
  Header h;
  bool have_header = false;
  NcuSourceKernel* k = nullptr;
  std::map<std::string, size_t> by_address;  // of the current kernel
  std::map<std::pair<std::string, int64_t>, size_t> by_line;
  int64_t last_line = -1;
  auto start_kernel = [&](const std::string& name) {
    if (k != nullptr && k->name == name) return;
    k = &out.kernels.emplace_back();
    k->name = name;
    by_address.clear();
    by_line.clear();
  };
  for (const CsvRow& row : rows) {
    if (row.empty() || (row.size() == 1 && row[0].empty())) continue;
    const std::string& first = row[0];
    if (first == "Kernel Name" || first == "Function Name") {
      start_kernel(SourceCell(row, 1));
      continue;
    }
    if (first == "File Path" || first == "File Name") {
      file = SourceCell(row, 1);
      out.view = "cuda,sass";
      last_line = -1;
      continue;
    }
    if (first == "Address" || first == "Line No") {
      h = ParseHeader(row);
      have_header = true;
      continue;
    }
    if (!have_header || h.samples < 0) continue;
    if (k == nullptr) start_kernel("");
    const bool is_line = h.line >= 0 && !first.empty();
    if (is_line) {
      // A line number that is not a plain count (text, NaN, absurdly large) leaves the line
      // unknown; converting it would be undefined behaviour (found by fuzz_ncu_csv).
      const double no = NcuNumber(first);
      if (!(no >= 1 && no <= 1e9)) {
        last_line = -1;
        continue;
      }
      last_line = static_cast<int64_t>(no);
      NcuSourceRow r;
      r.file = file;
      r.line = last_line;
      r.text = SourceCell(row, h.source);
      r.samples = Count(row, h.samples);
      if (r.samples <= 0) continue;
      FillStalls(h, row, r);
      auto [it, added] = by_line.emplace(std::make_pair(r.file, r.line), k->lines.size());
      if (added) k->lines.push_back(std::move(r));
      continue;
    }
    const std::string& address = SourceCell(row, h.address);
    if (address.empty()) continue;
    auto it = by_address.find(address);
    if (it != by_address.end()) {
      // Seen under another file: prefer the user's source line over an inlined header's.
      NcuSourceRow& prev = k->instructions[it->second];
      if (last_line >= 0 && IsHeaderFile(prev.line_file) && !IsHeaderFile(file)) {
        prev.line_file = file;
        prev.line_no = last_line;
      }
      continue;
    }
    NcuSourceRow r;
    r.address = address;
    r.text = SourceCell(row, h.sass);
    const size_t start = r.text.find_first_not_of(' ');
    r.text = start == std::string::npos ? "" : r.text.substr(start);
    r.samples = Count(row, h.samples);
    FillStalls(h, row, r);
    if (last_line >= 0) {
      r.line_file = file;
      r.line_no = last_line;
    }
    by_address.emplace(address, k->instructions.size());
    k->instructions.push_back(std::move(r));
  }
  for (NcuSourceKernel& kk : out.kernels) {
    std::sort(kk.instructions.begin(), kk.instructions.end(),
              [](const NcuSourceRow& a, const NcuSourceRow& b) {
                if (a.address.size() != b.address.size())
                  return a.address.size() < b.address.size();
                return a.address < b.address;
              });
    for (const NcuSourceRow& r : kk.instructions) kk.total_samples += r.samples;
  }
  std::erase_if(out.kernels, [](const NcuSourceKernel& kk) { return kk.instructions.empty(); });
  if (out.kernels.empty()) {
    return InvalidInputError(
        path +
        ": a source-page export without per-instruction warp stall samples; export it "
        "with `ncu --import R.ncu-rep --page source --csv --print-source sass` (or "
        "cuda,sass for source lines; build with -lineinfo) from a report collected with "
        "--set full or --section SourceCounters");
  }
  return out;
}

}  // namespace sightline
