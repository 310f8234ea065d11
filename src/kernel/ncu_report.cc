// Sections of `sightline ncu`: "ncu_kernels" (one per input), "ncu_kernel" (one per kernel shown
// in detail), "ncu_comparison" (with two or more inputs).
#include "kernel/ncu_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "kernel/ncu_stalls.h"

namespace sightline {
namespace {

// Absent when not finite: a ratio of extreme durations can overflow.
Value Num(double v) { return std::isfinite(v) ? Value{v} : Value{}; }
Value Count(int64_t v) { return v < 0 ? Value{} : Value{v}; }
Value Text(const std::string& s) { return s.empty() ? Value{} : Value{s}; }

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool SameKernels(const NcuInput& a, const NcuExport& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    if (a.kernels[i].id != b.kernels[i].id || a.kernels[i].name != b.kernels[i].name) {
      return false;
    }
  }
  return true;
}

const char* PageName(NcuPage p) { return p == NcuPage::kDetails ? "details" : "raw"; }

void AddKernelTable(Section& s, const std::vector<NcuKernelAnalysis>& ks) {
  Table& t = s.AddTable("kernels", "Kernels (profiling order)",
                        {{"id", "ID", Unit::kCount},
                         {"kernel", "Kernel", Unit::kText},
                         {"name", "Full name", Unit::kText, true},
                         {"block", "Block", Unit::kText, true},
                         {"grid", "Grid", Unit::kText, true},
                         {"duration_ns", "Duration", Unit::kDurationNs},
                         {"sm_throughput_pct", "SM %", Unit::kPercent},
                         {"memory_throughput_pct", "Mem %", Unit::kPercent},
                         {"dram_bandwidth_gbps", "DRAM", Unit::kGBps},
                         {"achieved_occupancy_pct", "Occ ach", Unit::kPercent},
                         {"theoretical_occupancy_pct", "Occ theo", Unit::kPercent},
                         {"waves_per_sm", "Waves", Unit::kNumber},
                         {"bound", "Bound", Unit::kText}});
  for (const NcuKernelAnalysis& k : ks) {
    t.rows.push_back({Count(k.id), k.short_name, k.name, Text(k.block_size), Text(k.grid_size),
                      Num(k.duration_ns), Num(k.sm_throughput_pct), Num(k.memory_throughput_pct),
                      Num(k.dram_bandwidth_gbps), Num(k.achieved_occupancy_pct),
                      Num(k.theoretical_occupancy_pct), Num(k.waves_per_sm), Text(k.bound)});
  }
  t.note =
      "Bound: compute or memory when that unit reaches 60% of peak, else latency "
      "(docs/kernel/ncu.md)";
}

void AddKernelSection(Report& report, int input, const NcuKernelAnalysis& k) {
  Section& s =
      report.AddSection("ncu_kernel", fmt::format("Kernel {}: {}", k.id, k.short_name), input);
  s.AddFact("id", "ID", Count(k.id), Unit::kCount);
  s.AddFact("name", "Name", k.name);
  s.AddFact("launch", "Block x grid", fmt::format("{} x {}", k.block_size, k.grid_size));
  s.AddFact("duration_ns", "Duration", Num(k.duration_ns), Unit::kDurationNs);
  s.AddFact("sm_throughput_pct", "Compute (SM) throughput", Num(k.sm_throughput_pct),
            Unit::kPercent);
  s.AddFact("memory_throughput_pct", "Memory throughput", Num(k.memory_throughput_pct),
            Unit::kPercent);
  s.AddFact("dram_throughput_pct", "DRAM throughput", Num(k.dram_throughput_pct), Unit::kPercent);
  s.AddFact("dram_bandwidth_gbps", "DRAM bandwidth", Num(k.dram_bandwidth_gbps), Unit::kGBps);
  s.AddFact("l1_hit_pct", "L1/TEX hit rate", Num(k.l1_hit_pct), Unit::kPercent);
  s.AddFact("l2_hit_pct", "L2 hit rate", Num(k.l2_hit_pct), Unit::kPercent);
  s.AddFact("bound", "Bound", Text(k.bound));
  s.AddFact("bound_reason", "  because", Text(k.bound_reason));
  s.AddFact("registers_per_thread", "Registers per thread", Count(k.registers), Unit::kCount);
  s.AddFact("static_smem_bytes", "Static shared memory per block", Count(k.static_smem_bytes),
            Unit::kBytes);
  s.AddFact("dynamic_smem_bytes", "Dynamic shared memory per block", Count(k.dynamic_smem_bytes),
            Unit::kBytes);
  s.AddFact("smem_config_bytes", "Shared memory configuration size", Count(k.smem_config_bytes),
            Unit::kBytes);
  s.AddFact("block_limit_registers", "Block limit registers", Count(k.limit_registers),
            Unit::kCount);
  s.AddFact("block_limit_shared_mem", "Block limit shared mem", Count(k.limit_shared_mem),
            Unit::kCount);
  s.AddFact("block_limit_warps", "Block limit warps", Count(k.limit_warps), Unit::kCount);
  s.AddFact("block_limit_sm", "Block limit SM", Count(k.limit_sm), Unit::kCount);
  s.AddFact("theoretical_occupancy_pct", "Theoretical occupancy", Num(k.theoretical_occupancy_pct),
            Unit::kPercent);
  s.AddFact("achieved_occupancy_pct", "Achieved occupancy", Num(k.achieved_occupancy_pct),
            Unit::kPercent);
  s.AddFact("waves_per_sm", "Waves per SM", Num(k.waves_per_sm), Unit::kNumber);
  s.AddFact("warp_cycles_per_issue", "Warp cycles per issued instruction",
            Num(k.warp_cycles_per_issue), Unit::kNumber);
  // Four warp schedulers (SM sub-partitions) per SM on every architecture since Volta.
  s.AddFact("active_warps_per_scheduler",
            k.active_warps_per_scheduler_derived
                ? "Active warps per scheduler (achieved warps per SM / 4)"
                : "Active warps per scheduler",
            Num(k.active_warps_per_scheduler), Unit::kNumber);
  s.AddFact("theoretical_warps_per_scheduler", "Theoretical warps per scheduler",
            Num(k.theoretical_warps_per_sm / 4), Unit::kNumber);
  s.AddFact("eligible_warps_per_scheduler", "Eligible warps per scheduler", Num(k.eligible_warps),
            Unit::kNumber);
  if (k.occupancy_check.checked) {
    s.AddFact("calculator_agrees", "Occupancy calculator agrees with ncu",
              std::string(k.occupancy_check.agrees ? "yes" : "no"));
    s.AddFact("calculator_detail", "  ", k.occupancy_check.detail);
  }

  for (const std::string& h : k.hints) s.notes.push_back("hint: " + h);

  if (!k.stalls.empty()) {
    Table& t =
        s.AddTable("stalls",
                   k.stalls_are_samples ? "Warp stall reasons (PC samples)"
                                        : "Warp stall reasons (cycles per issued instruction)",
                   {{"reason", "Reason", Unit::kText},
                    {"share_pct", "Share", Unit::kPercent},
                    {"value", k.stalls_are_samples ? "Samples" : "Cycles/issue", Unit::kNumber},
                    {"meaning", "Waiting on", Unit::kText, true}});
    for (size_t i = 0; i < k.stalls.size() && i < 5; ++i) {
      const NcuStall& st = k.stalls[i];
      const StallReasonInfo* info = FindStallReason(st.reason);
      t.rows.push_back({std::string(info ? info->title : st.reason), st.share_pct, st.value,
                        std::string(info ? info->meaning : "")});
      if (i < 3 && info != nullptr && st.share_pct >= 10.0) {
        s.notes.push_back(fmt::format("stall {} ({:.0f}%): {}; to change: {}", info->title,
                                      st.share_pct, info->meaning, info->fix));
      }
    }
  }

  std::vector<const NcuRule*> shown;
  for (const NcuRule& r : k.rules) {
    if (r.type != "INF" && shown.size() < 6) shown.push_back(&r);
  }
  if (!shown.empty()) {
    Table& t = s.AddTable("rules", "Nsight Compute rules",
                          {{"type", "Type", Unit::kText},
                           {"rule", "Rule", Unit::kText},
                           {"estimated_speedup_pct", "Est. speedup", Unit::kPercent},
                           {"speedup_type", "Of", Unit::kText},
                           {"message", "Message", Unit::kText, true}});
    for (const NcuRule* r : shown) {
      t.rows.push_back(
          {r->type, r->name, Num(r->speedup_pct), Text(r->speedup_type), r->description});
      s.notes.push_back(fmt::format(
          "ncu {}{}: {}", r->name,
          std::isnan(r->speedup_pct) ? "" : fmt::format(" (est. speedup {:.1f}%)", r->speedup_pct),
          r->description));
    }
  }
}

std::string KernelKey(const std::string& short_name, std::map<std::string, int>& seen) {
  return short_name + "#" + std::to_string(++seen[short_name]);
}

std::string TopStall(const NcuKernelAnalysis& k) {
  for (const NcuStall& st : k.stalls) {
    if (st.reason == "selected") continue;
    const StallReasonInfo* info = FindStallReason(st.reason);
    return fmt::format("{} {:.3g}", info != nullptr ? info->title : st.reason.c_str(), st.value);
  }
  return "";
}

double StallValue(const NcuKernelAnalysis& k, const std::string& reason) {
  for (const NcuStall& st : k.stalls) {
    if (st.reason == reason) return st.value;
  }
  return NAN;
}

// Before/after of one pair, metric by metric (two exports).
void AddPairTable(Section& s, size_t index, const std::string& label, const NcuKernelAnalysis& a,
                  const NcuKernelAnalysis& b) {
  Table& t = s.AddTable(fmt::format("pair_{}", index), "Before / after: " + label,
                        {{"metric", "Metric", Unit::kText},
                         {"before", "Before", Unit::kNumber},
                         {"after", "After", Unit::kNumber},
                         {"ratio", "After / before", Unit::kRatio}});
  auto row = [&](const std::string& name, double x, double y) {
    if (std::isnan(x) && std::isnan(y)) return;
    t.rows.push_back({name, Num(x), Num(y), x > 0 && !std::isnan(y) ? Num(y / x) : Value{}});
  };
  row("duration (us)", a.duration_ns / 1e3, b.duration_ns / 1e3);
  row("compute (SM) throughput (%)", a.sm_throughput_pct, b.sm_throughput_pct);
  row("memory throughput (%)", a.memory_throughput_pct, b.memory_throughput_pct);
  row("DRAM bandwidth (GB/s)", a.dram_bandwidth_gbps, b.dram_bandwidth_gbps);
  row("achieved occupancy (%)", a.achieved_occupancy_pct, b.achieved_occupancy_pct);
  row("theoretical occupancy (%)", a.theoretical_occupancy_pct, b.theoretical_occupancy_pct);
  row("active warps per scheduler", a.active_warps_per_scheduler, b.active_warps_per_scheduler);
  row("eligible warps per scheduler", a.eligible_warps, b.eligible_warps);
  row("warp cycles per issued instruction", a.warp_cycles_per_issue, b.warp_cycles_per_issue);
  row("grid (blocks)", a.grid_blocks >= 0 ? double(a.grid_blocks) : NAN,
      b.grid_blocks >= 0 ? double(b.grid_blocks) : NAN);
  std::vector<std::string> reasons;
  for (const auto* k : {&a, &b}) {
    for (size_t i = 0; i < k->stalls.size() && i < 3; ++i) {
      if (k->stalls[i].reason != "selected" &&
          std::find(reasons.begin(), reasons.end(), k->stalls[i].reason) == reasons.end()) {
        reasons.push_back(k->stalls[i].reason);
      }
    }
  }
  for (const std::string& r : reasons) {
    const StallReasonInfo* info = FindStallReason(r);
    row(fmt::format("stall: {} ({})", info != nullptr ? info->title : r.c_str(),
                    a.stalls_are_samples ? "samples" : "cycles per issue"),
        StallValue(a, r), StallValue(b, r));
  }
}

void AddComparison(Report& report, const std::vector<std::vector<NcuKernelAnalysis>>& all,
                   const NcuReportOptions& options) {
  Section& s = report.AddSection("ncu_comparison", "Side by side", -1);
  std::vector<Column> cols = {{"kernel", "Kernel", Unit::kText}};
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back(
        {fmt::format("duration_ns_{}", i), fmt::format("Dur [{}]", i), Unit::kDurationNs});
  }
  cols.push_back({"speedup", "Speedup", Unit::kRatio});
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back(
        {fmt::format("achieved_occupancy_pct_{}", i), fmt::format("Occ [{}]", i), Unit::kPercent});
  }
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back(
        {fmt::format("sm_throughput_pct_{}", i), fmt::format("SM % [{}]", i), Unit::kPercent});
  }
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back(
        {fmt::format("memory_throughput_pct_{}", i), fmt::format("Mem % [{}]", i), Unit::kPercent});
  }
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back({fmt::format("top_stall_{}", i), fmt::format("Top stall [{}]", i), Unit::kText});
  }
  for (size_t i = 0; i < all.size(); ++i) {
    cols.push_back({fmt::format("bound_{}", i), fmt::format("Bound [{}]", i), Unit::kText});
  }
  Table& t = s.AddTable("kernels", "", cols);
  // Kernels match by short name and occurrence (the 2nd launch of a kernel in one export with the
  // 2nd launch of that kernel in the other), after the explicit --pair renames. When every export
  // holds the same number of kernels and the names still do not match, they pair by launch order.
  std::vector<std::vector<std::string>> keys(all.size());
  int renamed = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    std::map<std::string, int> seen;
    for (const NcuKernelAnalysis& k : all[i]) {
      std::string name = k.short_name;
      if (i > 0) {
        for (const auto& [from, to] : options.pairs) {
          if (name == to && name != from) {
            name = from;
            ++renamed;
            break;
          }
        }
      }
      keys[i].push_back(KernelKey(name, seen));
    }
  }
  bool by_order = false;
  std::vector<std::string> renames;
  for (size_t i = 1; i < all.size(); ++i) {
    std::vector<std::string> x = keys[0], y = keys[i];
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    if (x != y && keys[i].size() == keys[0].size() && !keys[0].empty()) by_order = true;
  }
  if (by_order) {
    for (size_t i = 1; i < all.size(); ++i) {
      if (keys[i].size() != keys[0].size()) by_order = false;
    }
  }
  if (by_order) {
    for (size_t i = 1; i < all.size(); ++i) {
      for (size_t j = 0; j < keys[i].size(); ++j) {
        if (keys[i][j] != keys[0][j] && renames.size() < 4) {
          renames.push_back(all[0][j].short_name + " -> " + all[i][j].short_name);
        }
        keys[i][j] = keys[0][j];
      }
    }
  }
  std::vector<std::string> order;
  std::vector<std::map<std::string, const NcuKernelAnalysis*>> by_key(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < all[i].size(); ++j) {
      const std::string& key = keys[i][j];
      if (by_key[i].emplace(key, &all[i][j]).second &&
          std::find(order.begin(), order.end(), key) == order.end()) {
        order.push_back(key);
      }
    }
  }
  struct Pair {
    std::string label;
    const NcuKernelAnalysis *a, *b;
  };
  std::vector<Pair> pairs;
  for (const std::string& key : order) {
    std::vector<const NcuKernelAnalysis*> ks;
    for (auto& m : by_key) {
      auto it = m.find(key);
      ks.push_back(it == m.end() ? nullptr : it->second);
    }
    std::string label = key.ends_with("#1") ? key.substr(0, key.size() - 2) : key;
    const NcuKernelAnalysis *first = ks.front(), *last = ks.back();
    if (first != nullptr && last != nullptr && first->short_name != last->short_name) {
      label = first->short_name + " -> " + last->short_name;
    }
    std::vector<Value> row = {label};
    for (const NcuKernelAnalysis* k : ks) row.push_back(k ? Num(k->duration_ns) : Value{});
    row.push_back(first && last && last->duration_ns > 0
                      ? Num(first->duration_ns / last->duration_ns)
                      : Value{});
    for (const NcuKernelAnalysis* k : ks) {
      row.push_back(k ? Num(k->achieved_occupancy_pct) : Value{});
    }
    for (const NcuKernelAnalysis* k : ks) row.push_back(k ? Num(k->sm_throughput_pct) : Value{});
    for (const NcuKernelAnalysis* k : ks) {
      row.push_back(k ? Num(k->memory_throughput_pct) : Value{});
    }
    for (const NcuKernelAnalysis* k : ks) row.push_back(k ? Text(TopStall(*k)) : Value{});
    for (const NcuKernelAnalysis* k : ks) row.push_back(k ? Text(k->bound) : Value{});
    t.rows.push_back(std::move(row));
    if (first != nullptr && last != nullptr) pairs.push_back({label, first, last});
  }
  std::string legend;
  for (size_t i = 0; i < all.size(); ++i) {
    legend += fmt::format("{}[{}] {}", i ? ", " : "", i, report.inputs[i].label);
  }
  t.note = legend + "; speedup = duration [0] / duration [" + std::to_string(all.size() - 1) +
           "]; kernels match by name and launch order";
  s.AddFact("pairing", "Kernels paired",
            by_order ? "by launch order (each export holds " + std::to_string(keys[0].size()) +
                           " kernels and their names differ)"
            : renamed > 0 ? fmt::format("by name, {} renamed by --pair", renamed)
                          : std::string("by name"));
  if (by_order) {
    std::string list;
    for (const std::string& r : renames) list += (list.empty() ? "" : ", ") + r;
    s.notes.push_back("names differ, paired by launch order: " + list +
                      " (name the pairs with --pair OLD=NEW when the order differs)");
  }
  if (all.size() == 2) {
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) {
      const double dx = std::isnan(x.a->duration_ns) ? -1 : x.a->duration_ns;
      const double dy = std::isnan(y.a->duration_ns) ? -1 : y.a->duration_ns;
      return dx > dy;
    });
    for (size_t i = 0; i < pairs.size() && i < 3; ++i) {
      AddPairTable(s, i, pairs[i].label, *pairs[i].a, *pairs[i].b);
    }
  }
}

}  // namespace

std::vector<NcuInput> GroupNcuExports(std::vector<NcuExport> exports) {
  std::vector<NcuInput> out;
  std::vector<NcuPage> pages;
  for (NcuExport& e : exports) {
    if (!out.empty() && out.back().pages.find('+') == std::string::npos && pages.back() != e.page &&
        SameKernels(out.back(), e)) {
      NcuInput& in = out.back();
      for (size_t i = 0; i < e.kernels.size(); ++i) {
        NcuKernel& k = in.kernels[i];
        for (NcuMetric& m : e.kernels[i].metrics) k.metrics.push_back(std::move(m));
        for (NcuRule& r : e.kernels[i].rules) k.rules.push_back(std::move(r));
      }
      in.label += " + " + BaseName(e.path);
      in.path += " + " + e.path;
      in.pages = "details+raw";
      in.lines_skipped += e.lines_skipped;
      continue;
    }
    NcuInput& in = out.emplace_back();
    in.label = BaseName(e.path);
    in.path = e.path;
    in.pages = PageName(e.page);
    in.lines_skipped = e.lines_skipped;
    in.kernels = std::move(e.kernels);
    pages.push_back(e.page);
  }
  return out;
}

Report BuildNcuReport(const std::vector<NcuInput>& inputs, const NcuReportOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  std::vector<std::vector<NcuKernelAnalysis>> all;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NcuInput& in = inputs[i];
    ReportInput& ri = report.inputs.emplace_back();
    ri.label = in.label;
    ri.path = in.path;
    ri.format = "ncu-csv";
    ri.format_version = in.pages + " page";
    ri.producer = "Nsight Compute";
    if (in.lines_skipped > 0) {
      ri.diagnostics.Add(DiagCode::kNcuLinesSkipped, in.lines_skipped);
    }
    std::vector<NcuKernelAnalysis>& ks = all.emplace_back();
    for (const NcuKernel& k : in.kernels) ks.push_back(AnalyzeNcuKernel(k));

    Section& s = report.AddSection("ncu_kernels", "Nsight Compute export", static_cast<int>(i));
    double total = 0;
    int timed = 0;  // kernels whose export states a duration
    int checked = 0, agree = 0;
    std::map<std::string, int> bounds;
    for (const NcuKernelAnalysis& k : ks) {
      if (!std::isnan(k.duration_ns)) {
        total += k.duration_ns;
        ++timed;
      }
      checked += k.occupancy_check.checked;
      agree += k.occupancy_check.checked && k.occupancy_check.agrees;
      if (!k.bound.empty()) ++bounds[k.bound];
    }
    s.AddFact("kernels", "Kernels profiled", static_cast<int64_t>(ks.size()), Unit::kCount);
    // No kernel with a duration (the export's sections had none): absent, not 0 ns.
    s.AddFact("total_duration_ns", "Total duration", timed > 0 ? Value(total) : Value(),
              Unit::kDurationNs);
    s.AddFact("pages", "Pages", in.pages);
    std::string split;
    for (const char* b : {"compute", "memory", "latency"}) {
      split += fmt::format("{}{} {}", split.empty() ? "" : ", ", bounds[b], b);
    }
    s.AddFact(
        "bound_counts", "Bound",
        bounds.empty() ? "unknown (no Speed Of Light section; --section SpeedOfLight)" : split);
    if (checked > 0) {
      s.AddFact("calculator_agreement", "Occupancy calculator = ncu block limits",
                fmt::format("{} of {} kernels", agree, checked));
    }
    AddKernelTable(s, ks);
    for (const std::string& m : MissingNcuSections(ks)) s.notes.push_back("missing: " + m);

    std::vector<const NcuKernelAnalysis*> longest;
    for (const NcuKernelAnalysis& k : ks) longest.push_back(&k);
    std::stable_sort(longest.begin(), longest.end(), [](const auto* a, const auto* b) {
      const double da = std::isnan(a->duration_ns) ? -1 : a->duration_ns;
      const double db = std::isnan(b->duration_ns) ? -1 : b->duration_ns;
      return da > db;
    });
    if (static_cast<int>(longest.size()) > options.top) longest.resize(options.top);
    std::sort(longest.begin(), longest.end(),
              [](const auto* a, const auto* b) { return a->id < b->id; });
    if (static_cast<int>(ks.size()) > options.top) {
      s.notes.push_back(
          fmt::format("the {} longest kernels are shown in detail (--top N)", options.top));
    }
    for (const NcuKernelAnalysis* k : longest) {
      AddKernelSection(report, static_cast<int>(i), *k);
    }
  }
  if (all.size() > 1) AddComparison(report, all, options);
  return report;
}

}  // namespace sightline
