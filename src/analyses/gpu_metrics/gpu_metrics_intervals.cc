#include "analyses/gpu_metrics/gpu_metrics_intervals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "analyses/common/analysis_context.h"
#include "analyses/common/range_at.h"
#include "facts/graph_kernel_paths.h"
#include "facts/launch_projection.h"

namespace sightline {
namespace {

// Name prefixes of the metrics shown, in order; the alternatives spell the same metric in older
// metric sets (nsys's recipes use the same fallbacks).
constexpr std::string_view kShown[][2] = {
    {"GR Active", ""},          {"SMs Active", "SM Active"}, {"SM Issue", ""},
    {"Tensor Active", ""},      {"DRAM Read Bandwidth", ""}, {"DRAM Write Bandwidth", ""},
    {"PCIe RX Throughput", ""}, {"PCIe TX Throughput", ""},  {"NVLink RX", ""},
    {"NVLink TX", ""},
};

std::string MetricShortTitle(std::string_view name) {
  const size_t bracket = name.find(" [");
  return std::string(bracket == std::string_view::npos ? name : name.substr(0, bracket));
}

}  // namespace

StringId FindMetric(const std::vector<StringId>& names, const Trace& trace,
                    std::string_view prefix) {
  for (StringId m : names) {
    if (trace.str(m).starts_with(prefix)) return m;
  }
  return StringId{};
}

std::vector<StringId> IntervalMetricNames(const Trace& trace) {
  std::set<uint32_t> present;
  for (size_t i = 0; i < trace.counters.size(); ++i) present.insert(trace.counters.name[i].value);
  std::vector<StringId> out;
  for (const auto& alternatives : kShown) {
    for (std::string_view prefix : alternatives) {
      if (prefix.empty()) continue;
      bool found = false;
      for (uint32_t id : present) {
        const std::string_view name = trace.str(StringId{id});
        if (name.starts_with(prefix) && name.find("[Throughput %]") != std::string_view::npos &&
            (name.size() == prefix.size() || name[prefix.size()] == ' ')) {
          out.push_back(StringId{id});
          found = true;
          break;
        }
      }
      if (found) break;
    }
  }
  return out;
}

StatusOr<IntervalMetricsResult> ComputeIntervalMetrics(AnalysisContext& context,
                                                       const IntervalMetricsOptions& options) {
  const Trace& trace = context.trace();
  IntervalMetricsResult res;
  res.metrics = IntervalMetricNames(trace);
  if (res.metrics.empty()) return res;
  const MetricSamples& samples = context.samples();
  auto figures = [&](int32_t device, const std::vector<Interval>& intervals) {
    std::vector<WeightedFigure> out;
    for (StringId m : res.metrics) out.push_back(samples.Over(device, m, intervals));
    return out;
  };
  auto has_samples = [&](int32_t device) {
    for (StringId m : res.metrics) {
      if (samples.Has(device, m)) return true;
    }
    return false;
  };
  const LaunchIndex& launches = context.graphs().LaunchesWithCapture();
  const KernelTable& k = trace.kernels;
  // Per graph kernel held by a range at its second point: that point's kind (counted once).
  std::vector<PointKind> held(
      launches.captured_kernels() + launches.aligned_kernels() > 0 ? k.size() : 0,
      PointKind::kLaunch);
  // The GPU spans, per device, of the work launched from (pid, tid) inside [a, b). With
  // `second`, also the graph kernels the range holds at their capture or eager counterpart: a
  // span per device and replay (the graph launch that ran them), as the replays lie apart on the
  // timeline, never one span across them.
  auto spans = [&](int32_t pid, int32_t tid, TimeNs a, TimeNs b, bool second) {
    std::map<std::pair<int32_t, int32_t>, LaunchedWork> by_device;  // (device, replay or -1)
    const int32_t thread = launches.ThreadOf(pid, tid);
    if (thread < 0) return by_device;
    const std::span<const uint32_t> work = launches.ThreadWork(thread);
    const std::span<const PointKind> kinds = launches.ThreadPointKinds(thread);
    const auto [lo, hi] = launches.EntriesIn(thread, a, b);
    for (size_t e = lo; e < hi; ++e) {
      const uint32_t w = work[e];
      if (kinds[e] == PointKind::kLaunch) {
        const int32_t device =
            launches.IsKernel(w) ? k.device[w] : trace.memops.device[launches.MemOpRow(w)];
        launches.Accumulate(w, by_device[{device, -1}]);
        continue;
      }
      if (!second || !launches.PointCounts(w, kinds[e], a, b)) continue;
      const int32_t replay =
          k.launch_call[w] != kNoRow ? k.launch_call[w] : -2 - static_cast<int32_t>(w);
      launches.Accumulate(w, by_device[{k.device[w], replay}]);
      held[w] = kinds[e];
    }
    return by_device;
  };

  // Iterations: the GPU span of the work each launched, on each device it used.
  std::set<int32_t> iteration_rows;
  if (const IterationSet* set = context.loop().MainSet()) {
    for (const Iteration& it : set->iterations) {
      iteration_rows.insert(it.range_row);
      // The iteration's own launches: a capture inside it is not its work.
      for (const auto& [key, work] :
           spans(set->pid, set->tid, it.start_ns, it.end_ns, /*second=*/false)) {
        const int32_t device = key.first;
        if (work.empty() || !has_samples(device)) continue;
        IntervalMetricsRow& row = res.iterations.emplace_back();
        row.label = std::string(trace.str(it.name));
        row.index = it.index;
        row.device = device;
        row.span_ns = work.span_ns();
        row.figures = figures(device, {{work.first_start_ns, work.last_end_ns}});
      }
    }
  }

  // Ranges (NVTX and annotations, not the iterations), grouped by name per device.
  struct Group {
    int64_t instances = 0;
    std::vector<Interval> spans;
  };
  std::map<std::pair<int32_t, uint32_t>, Group> groups;  // (device, name)
  std::map<std::pair<int32_t, uint32_t>, Group> quiet;   // ranges without GPU work
  // The GPUs each process launched work on (kernels and memory operations), for the ranges that
  // launched none; a process with none: every GPU with samples.
  std::map<int32_t, std::set<int32_t>> process_devices;
  for (size_t i = 0; i < k.size(); ++i) process_devices[k.pid[i]].insert(k.device[i]);
  for (size_t i = 0; i < trace.memops.size(); ++i) {
    process_devices[trace.memops.pid[i]].insert(trace.memops.device[i]);
  }
  std::set<int32_t> sampled_devices;
  for (int32_t device : samples.Devices()) {
    if (has_samples(device)) sampled_devices.insert(device);
  }
  const RangeTable& r = trace.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::kCpuOp || r.kind[i] == RangeKind::kPythonFunction) continue;
    if (iteration_rows.count(static_cast<int32_t>(i)) > 0) continue;
    if (IsAutogradOpRange(trace.str(r.name[i]))) continue;  // ops (nsys autograd-nvtx), not ranges
    int32_t last_device = INT32_MIN;
    bool launched = false;
    for (const auto& [key, work] :
         spans(r.pid[i], r.tid[i], r.start_ns[i], r.end_ns[i], /*second=*/true)) {
      if (work.empty()) continue;
      launched = true;
      Group& g = groups[{key.first, r.name[i].value}];
      if (key.first != last_device) ++g.instances;  // the keys are by device first
      last_device = key.first;
      g.spans.push_back({work.first_start_ns, work.last_end_ns});
    }
    if (launched || r.end_ns[i] <= r.start_ns[i]) continue;
    const auto used = process_devices.find(r.pid[i]);
    for (int32_t device : used != process_devices.end() ? used->second : sampled_devices) {
      if (sampled_devices.count(device) == 0) continue;
      Group& g = quiet[{device, r.name[i].value}];
      ++g.instances;
      g.spans.push_back({r.start_ns[i], r.end_ns[i]});
    }
  }
  for (uint8_t graph : context.graphs().GraphPaths().graph) res.graph_kernels += graph;
  for (PointKind h : held) {
    res.graph_kernels_by_capture += h == PointKind::kCapture;
    res.graph_kernels_by_alignment += h == PointKind::kAligned;
  }
  // Per device, the groups' rows by span, the top_ranges longest kept.
  auto rows_of = [&](std::map<std::pair<int32_t, uint32_t>, Group>& from,
                     std::vector<IntervalMetricsRow>& into) {
    std::map<int32_t, std::vector<IntervalMetricsRow>> by_device;
    for (auto& [key, g] : from) {
      if (!has_samples(key.first)) continue;
      std::vector<Interval> u = MergeIntervals(std::move(g.spans));
      IntervalMetricsRow row;
      row.label = std::string(trace.str(StringId{key.second}));
      row.device = key.first;
      row.instances = g.instances;
      row.span_ns = TotalLength(u);
      row.figures = figures(key.first, u);
      by_device[key.first].push_back(std::move(row));
    }
    for (auto& [device, rows] : by_device) {
      std::stable_sort(rows.begin(), rows.end(),
                       [](const auto& a, const auto& b) { return a.span_ns > b.span_ns; });
      if (rows.size() > options.top_ranges) rows.resize(options.top_ranges);
      for (auto& row : rows) into.push_back(std::move(row));
    }
  };
  rows_of(groups, res.ranges);
  rows_of(quiet, res.quiet_ranges);
  return res;
}

Status AddIntervalMetricTables(AnalysisContext& context, Section& s) {
  ASSIGN_OR_RETURN(IntervalMetricsResult r,
                   ComputeIntervalMetrics(context, IntervalMetricsOptions{}));
  if (r.metrics.empty()) return Status::Ok();
  const Trace& trace = context.trace();
  // The spread (p50, p90) is shown for SMs Active, else the first metric.
  size_t spread_index = 0;
  for (size_t k = 0; k < r.metrics.size(); ++k) {
    const std::string_view name = trace.str(r.metrics[k]);
    if (name.starts_with("SMs Active") || name.starts_with("SM Active")) spread_index = k;
  }
  auto columns = [&](const char* label_key, const char* label_title, bool ranges) {
    std::vector<Column> c = {{"device", "GPU", Unit::kNumber},
                             {label_key, label_title, Unit::kText}};
    if (ranges) c.push_back({"instances", "ranges", Unit::kCount});
    c.push_back({"span_ns", "GPU span", Unit::kDurationNs});
    c.push_back({"samples", "samples", Unit::kCount});
    for (StringId m : r.metrics) {
      const std::string title = MetricShortTitle(trace.str(m));
      std::string key;
      for (char ch : title)
        key += std::isalnum(static_cast<unsigned char>(ch)) ? std::tolower(ch) : '_';
      c.push_back({key + "_pct", title + " %", Unit::kNumber});
    }
    const std::string first = MetricShortTitle(trace.str(r.metrics[spread_index]));
    c.push_back({"p50_pct", first + " p50", Unit::kNumber, /*optional=*/true});
    c.push_back({"p90_pct", first + " p90", Unit::kNumber, /*optional=*/true});
    return c;
  };
  auto row_of = [&](const IntervalMetricsRow& x, bool ranges) {
    std::vector<Value> row = {int64_t{x.device}, x.label};
    if (ranges) row.emplace_back(x.instances);
    row.emplace_back(x.span_ns);
    int64_t most = 0;
    for (const WeightedFigure& f : x.figures) most = std::max(most, f.samples);
    row.emplace_back(most);
    for (const WeightedFigure& f : x.figures) {
      row.push_back(f.samples > 0 ? Value(f.mean) : Value());
    }
    const WeightedFigure& spread = x.figures[spread_index];
    row.push_back(spread.samples > 0 ? Value(spread.p50) : Value());
    row.push_back(spread.samples > 0 ? Value(spread.p90) : Value());
    return row;
  };
  const std::string note =
      "overlap-weighted means over the GPU span of the work launched inside (first start to last "
      "end, per device): each sample holds its value until the next one and counts by how much of "
      "it falls inside; samples = how many samples the figures rest on (a figure resting on 1-2 "
      "samples is a rough one); empty = no sample. Device-wide: other work on the GPU counts too.";
  if (!r.iterations.empty()) {
    Table& t =
        s.AddTable("per_iteration", "Per iteration", columns("iteration", "iteration", false));
    for (const IntervalMetricsRow& x : r.iterations) t.rows.push_back(row_of(x, false));
    t.note = note;
  }
  if (!r.quiet_ranges.empty()) {
    std::vector<Column> c = columns("range", "range", true);
    c[3] = {"time_ns", "range time", Unit::kDurationNs};
    Table& t = s.AddTable("per_range_no_gpu_work",
                          "Per NVTX range / annotation that launched no GPU work (top by time)",
                          std::move(c));
    for (const IntervalMetricsRow& x : r.quiet_ranges) t.rows.push_back(row_of(x, true));
    t.note =
        "ranges that launched no GPU work (and hold no replayed graph kernel): overlap-weighted "
        "means over the ranges' own time (the union of their host intervals) on each GPU their "
        "process used (every GPU with samples when it used none), so a range during which the GPU "
        "sat idle shows SMs Active near 0; device-wide, work launched before the range and still "
        "running counts too. Ranges of one name are merged.";
  }
  if (!r.ranges.empty()) {
    Table& t = s.AddTable("per_range", "Per NVTX range / annotation (top by GPU span)",
                          columns("range", "range", true));
    for (const IntervalMetricsRow& x : r.ranges) t.rows.push_back(row_of(x, true));
    t.note = note + " Ranges of one name are merged (the union of their spans).";
    if (r.graph_kernels > 0) {
      const double all = static_cast<double>(r.graph_kernels);
      const int64_t neither =
          r.graph_kernels - r.graph_kernels_by_capture - r.graph_kernels_by_alignment;
      s.AddFact("per_range_graph_kernels", "Graph kernels (per-range metrics)", r.graph_kernels,
                Unit::kCount);
      s.AddFact("per_range_graph_by_capture_pct", "... in a range by their capture",
                100.0 * static_cast<double>(r.graph_kernels_by_capture) / all, Unit::kPercent);
      s.AddFact("per_range_graph_by_alignment_pct", "... by their eager counterpart",
                100.0 * static_cast<double>(r.graph_kernels_by_alignment) / all, Unit::kPercent);
      t.note += fmt::format(
          " A replayed CUDA graph kernel counts also in the ranges open when it was captured, "
          "or around its eager counterpart (not the eager step's own range), over its own "
          "replay's GPU span: of {} graph kernels, {} by capture, {} by alignment, {} only "
          "around their graph launch.",
          r.graph_kernels, r.graph_kernels_by_capture, r.graph_kernels_by_alignment, neither);
    }
  }
  return Status::Ok();
}

}  // namespace sightline
