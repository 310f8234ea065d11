// `sightline ncu` on a source-page export: per kernel, the stall reasons over all samples, the
// hottest instructions and (cuda,sass view) source lines with their share of the stall samples and
// of their main reason's samples, and a headline naming the line and why it stalls.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "importers/ncu/ncu_source.h"
#include "kernel/ncu_report.h"
#include "kernel/ncu_stalls.h"

namespace sightline {
namespace {

std::string Short(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string Trim(std::string s, size_t max = 72) {
  const size_t a = s.find_first_not_of(" \t");
  s = a == std::string::npos ? "" : s.substr(a);
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

std::string ReasonTitle(const std::string& key) {
  const StallReasonInfo* info = FindStallReason(key);
  return info != nullptr ? info->title : key;
}

double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// Sample counts as integers when they fit (they always do from ncu; sums of hostile input may not).
Value Samples(double v) { return v >= 0 && v < 9e18 ? Value{static_cast<int64_t>(v)} : Value{v}; }

struct LineAgg {
  std::string file;
  int64_t line = -1;
  double samples = 0;
  std::map<std::string, double> stalls;
};

}  // namespace

void AddNcuSourceSections(Report& report, const std::vector<NcuSourceExport>& sources, int top) {
  for (const NcuSourceExport& e : sources) {
    ReportInput& ri = report.inputs.emplace_back();
    ri.label = Short(e.path);
    ri.path = e.path;
    ri.format = "ncu-csv";
    ri.format_version = "source page (" + e.view + ")";
    ri.producer = "Nsight Compute";
    const int input = static_cast<int>(report.inputs.size()) - 1;
    for (const NcuSourceKernel& k : e.kernels) {
      std::map<std::string, double> reasons;
      for (const NcuSourceRow& r : k.instructions) {
        for (const NcuSourceStall& s : r.stalls) reasons[s.reason] += s.samples;
      }
      // "selected" is the warp issuing, not a stall; shares are of all samples as ncu shows them.
      std::vector<std::pair<std::string, double>> order(reasons.begin(), reasons.end());
      std::stable_sort(order.begin(), order.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      const std::string short_name = k.name.substr(0, k.name.find('('));
      Section& s = report.AddSection("ncu_source", "Source counters: " + short_name, input);
      s.AddFact("kernel", "Kernel", k.name);
      s.AddFact("view", "View", e.view);
      s.AddFact("instructions", "Instructions", static_cast<int64_t>(k.instructions.size()),
                Unit::kCount);
      s.AddFact("samples", "Warp stall samples", k.total_samples, Unit::kCount);
      if (!order.empty()) {
        s.AddFact("top_reason", "Top reason",
                  fmt::format("{} ({:.1f}% of samples)", ReasonTitle(order[0].first),
                              Pct(order[0].second, k.total_samples)));
      }
      Table& rt = s.AddTable("reasons", "Stall reasons over all samples",
                             {{"reason", "Reason", Unit::kText},
                              {"samples", "Samples", Unit::kCount},
                              {"share_pct", "Share", Unit::kPercent}});
      for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
        rt.rows.push_back({ReasonTitle(order[i].first), Samples(order[i].second),
                           Pct(order[i].second, k.total_samples)});
      }

      std::vector<const NcuSourceRow*> hot;
      for (const NcuSourceRow& r : k.instructions) {
        if (r.samples > 0) hot.push_back(&r);
      }
      std::stable_sort(hot.begin(), hot.end(),
                       [](const auto* a, const auto* b) { return a->samples > b->samples; });
      Table& it = s.AddTable("instructions", "Hottest instructions",
                             {{"address", "Address", Unit::kText},
                              {"instruction", "Instruction", Unit::kText},
                              {"line", "Line", Unit::kText},
                              {"samples", "Samples", Unit::kCount},
                              {"share_pct", "Share", Unit::kPercent},
                              {"reason", "Main reason", Unit::kText},
                              {"reason_share_pct", "Of reason", Unit::kPercent}});
      for (size_t i = 0; i < hot.size() && static_cast<int>(i) < top; ++i) {
        const NcuSourceRow& r = *hot[i];
        const std::string reason = r.stalls.empty() ? "" : r.stalls[0].reason;
        it.rows.push_back(
            {r.address, Trim(r.text, 48),
             r.line_no >= 0 ? Value{fmt::format("{}:{}", Short(r.line_file), r.line_no)} : Value{},
             Samples(r.samples), Pct(r.samples, k.total_samples),
             reason.empty() ? Value{} : Value{ReasonTitle(reason)},
             reason.empty() ? Value{} : Value{Pct(r.stalls[0].samples, reasons[reason])}});
      }
      it.note =
          "Share = the instruction's samples / the kernel's; Of reason = its samples of "
          "its main reason / the kernel's samples of that reason. A sample is charged to "
          "the instruction that waits (for long scoreboard, the first use of a load's "
          "result), not to the load.";
      if (!hot.empty()) {
        const NcuSourceRow& r = *hot[0];
        if (!r.stalls.empty()) {
          const std::string& reason = r.stalls[0].reason;
          const StallReasonInfo* info = FindStallReason(reason);
          s.notes.push_back(fmt::format(
              "hottest instruction: {} `{}` holds {:.1f}% of the stall samples and {:.1f}% of the "
              "{} samples{}",
              r.address, Trim(r.text, 60), Pct(r.samples, k.total_samples),
              Pct(r.stalls[0].samples, reasons[reason]), ReasonTitle(reason),
              info != nullptr ? fmt::format(" ({})", info->meaning) : std::string()));
        }
      }

      // Source lines: the instructions' samples summed per line (the user's file where the
      // instruction was inlined from a header), so that no sample counts twice.
      std::map<std::pair<std::string, int64_t>, LineAgg> lines;
      for (const NcuSourceRow& r : k.instructions) {
        if (r.line_no < 0 || r.samples <= 0) continue;
        LineAgg& a = lines[{r.line_file, r.line_no}];
        a.file = r.line_file;
        a.line = r.line_no;
        a.samples += r.samples;
        for (const NcuSourceStall& st : r.stalls) a.stalls[st.reason] += st.samples;
      }
      if (lines.empty()) continue;
      std::map<std::pair<std::string, int64_t>, std::string> text;
      for (const NcuSourceRow& l : k.lines) text[{l.file, l.line}] = l.text;
      std::vector<const LineAgg*> hl;
      for (const auto& [key, a] : lines) hl.push_back(&a);
      std::stable_sort(hl.begin(), hl.end(),
                       [](const auto* a, const auto* b) { return a->samples > b->samples; });
      Table& lt = s.AddTable("lines", "Hottest source lines",
                             {{"line", "Line", Unit::kText},
                              {"source", "Source", Unit::kText},
                              {"samples", "Samples", Unit::kCount},
                              {"share_pct", "Share", Unit::kPercent},
                              {"reason", "Main reason", Unit::kText},
                              {"reason_share_pct", "Of reason", Unit::kPercent}});
      auto main_reason = [](const LineAgg& a) {
        std::pair<std::string, double> best{"", 0};
        for (const auto& [r, v] : a.stalls) {
          if (v > best.second) best = {r, v};
        }
        return best;
      };
      for (size_t i = 0; i < hl.size() && static_cast<int>(i) < top; ++i) {
        const LineAgg& a = *hl[i];
        const auto [reason, v] = main_reason(a);
        auto t = text.find({a.file, a.line});
        lt.rows.push_back({fmt::format("{}:{}", Short(a.file), a.line),
                           t == text.end() ? Value{} : Value{Trim(t->second)}, Samples(a.samples),
                           Pct(a.samples, k.total_samples),
                           reason.empty() ? Value{} : Value{ReasonTitle(reason)},
                           reason.empty() ? Value{} : Value{Pct(v, reasons[reason])}});
      }
      lt.note = "Samples of the instructions compiled from each line (build with -lineinfo).";
      const LineAgg& a = *hl[0];
      const auto [reason, v] = main_reason(a);
      if (!reason.empty()) {
        const StallReasonInfo* info = FindStallReason(reason);
        auto t = text.find({a.file, a.line});
        s.notes.push_back(fmt::format(
            "hottest line: {}:{}{} holds {:.1f}% of the stall samples and {:.1f}% of the {} "
            "samples{}",
            Short(a.file), a.line, t == text.end() ? "" : " `" + Trim(t->second, 90) + "`",
            Pct(a.samples, k.total_samples), Pct(v, reasons[reason]), ReasonTitle(reason),
            info != nullptr ? fmt::format("; fix: {}", info->fix) : std::string()));
      }
    }
  }
}

}  // namespace sightline
