#include "analyses/nvtx_projection/nvtx_projection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyses/common/analysis_context.h"
#include "analyses/common/percent.h"
#include "facts/graph_kernel_paths.h"

namespace sightline {
namespace {

bool Considered(RangeKind kind, const NvtxProjectionOptions& options) {
  switch (kind) {
    case RangeKind::kNvtxPushPop:
    case RangeKind::kNvtxStartEnd:
    case RangeKind::kUserAnnotation:
      return true;
    case RangeKind::kCpuOp:
    case RangeKind::kPythonFunction:
      return options.include_cpu_ops;
  }
  return false;
}

struct GroupKey {
  uint32_t name, domain;
  int32_t depth;
  friend bool operator==(const GroupKey&, const GroupKey&) = default;
};

struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const noexcept {
    uint64_t h = (static_cast<uint64_t>(k.name) << 32) ^ k.domain;
    h ^= static_cast<uint64_t>(k.depth) * 0x9e3779b97f4a7c15ULL;
    return std::hash<uint64_t>()(h);
  }
};

std::string DisplayName(const Trace& trace, StringId name, StringId domain) {
  if (domain.value == 0) return std::string(trace.str(name));
  return fmt::format("{}:{}", trace.str(domain), trace.str(name));
}

std::string DisplayName(const Trace& trace, const NvtxRangeGroup& g) {
  return g.from_reference ? std::string(g.reference_name) : DisplayName(trace, g.name, g.domain);
}

// The groups of the eager reference's ranges: per graph kernel with a path there, each range of
// the path (outermost first, below the eager step) by (name, depth), as this trace's are.
void AddReferenceGroups(const GraphKernelPaths& gp, const Trace& trace, NvtxProjectionResult& res) {
  std::map<std::pair<std::string_view, int32_t>, size_t> group_of;
  for (size_t i = 0; i < gp.source.size(); ++i) {
    if (gp.source[i] != PathSource::kReference) continue;
    ++res.kernels_reference_matched;
    const std::vector<std::string_view>& names = gp.components[gp.path[i]];
    if (names.empty()) continue;
    ++res.kernels_by_reference;
    const DurationNs d = trace.kernels.dur_ns(i);
    for (size_t depth = 0; depth < names.size(); ++depth) {
      auto [it, inserted] =
          group_of.try_emplace({names[depth], static_cast<int32_t>(depth)}, res.groups.size());
      if (inserted) {
        NvtxRangeGroup& g = res.groups.emplace_back();
        g.from_reference = true;
        g.reference_name = names[depth];
        g.depth = static_cast<int32_t>(depth);
        g.path = "eager reference: ";
        for (size_t n = 0; n <= depth; ++n) {
          if (n > 0) g.path += " / ";
          g.path += names[n];
        }
      }
      NvtxRangeGroup& g = res.groups[it->second];
      ++g.work.kernel_count;
      g.work.kernel_time_ns += d;
    }
  }
}

// Mean in whole ns (JSON *_ns values are integers).
int64_t AvgNs(DurationNs total, int64_t count) {
  return count > 0 ? static_cast<int64_t>(std::llround(static_cast<double>(total) / count)) : 0;
}

}  // namespace

StatusOr<NvtxProjectionResult> ComputeNvtxProjection(AnalysisContext& context,
                                                     const NvtxProjectionOptions& options) {
  const Trace& trace = context.trace();
  const RangeTable& r = trace.ranges;
  NvtxProjectionResult res;
  for (size_t i = 0; i < r.size(); ++i) {
    if (Considered(r.kind[i], options)) res.rows.push_back(static_cast<int32_t>(i));
  }
  res.ranges = static_cast<int64_t>(res.rows.size());
  // Replayed graph kernels count also in the ranges open at their capture, or around their
  // eager counterpart (launch_projection.h).
  const LaunchIndex& index = context.graphs().LaunchesWithCapture();
  res.kernels_with_capture = index.captured_kernels();
  res.kernels_aligned = index.aligned_kernels();
  for (uint8_t g : context.graphs().GraphPaths().graph) res.graph_kernels += g;
  res.projection = ProjectRanges(trace, index, res.rows);
  res.kernels = static_cast<int64_t>(trace.kernels.size());
  res.kernels_in_ranges = res.projection.kernels_inside;
  res.kernels_by_capture = res.projection.kernels_by_capture;
  res.kernels_by_alignment = res.projection.kernels_by_alignment;
  res.unlinked_kernels = index.unlinked_kernels();
  res.unlinked_memops = index.unlinked_memops();
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (trace.kernels.launch_call[i] == kNoRow)
      res.unlinked_kernel_time_ns += trace.kernels.dur_ns(i);
  }

  std::unordered_map<GroupKey, int32_t, GroupKeyHash> group_of;
  std::vector<int32_t> first_instance;  // per group: index into rows
  for (size_t i = 0; i < res.rows.size(); ++i) {
    const int32_t row = res.rows[i];
    const GroupKey key{r.name[row].value, r.domain[row].value, res.projection.depth[i]};
    auto [it, inserted] = group_of.try_emplace(key, static_cast<int32_t>(res.groups.size()));
    if (inserted) {
      NvtxRangeGroup& g = res.groups.emplace_back();
      g.name = r.name[row];
      g.domain = r.domain[row];
      g.kind = r.kind[row];
      g.depth = key.depth;
      first_instance.push_back(static_cast<int32_t>(i));
    }
    NvtxRangeGroup& g = res.groups[it->second];
    const DurationNs cpu = r.dur_ns(row);
    ++g.count;
    g.cpu_total_ns += cpu;
    g.cpu_max_ns = std::max(g.cpu_max_ns, cpu);
    const LaunchedWork& w = res.projection.work[i];
    g.work.Add(w);
    g.gpu_span_total_ns += w.span_ns();
    if (!w.empty()) ++g.instances_with_gpu_work;
  }
  // Path of each group's first instance, outermost first. Deep nesting makes a group per depth:
  // a whole path each would take memory in the square of the depth (10^4 nested ranges: 10^4
  // paths of 10^4 names), so a path keeps its outermost and innermost names and counts the rest.
  constexpr size_t kOuterParts = 3, kInnerParts = 8;
  std::vector<int32_t> chain;
  for (size_t gi = 0; gi < res.groups.size(); ++gi) {
    chain.clear();
    for (int32_t i = first_instance[gi]; i >= 0; i = res.projection.parent[i]) {
      chain.push_back(i);  // innermost first
    }
    const size_t n = chain.size();
    std::string path;
    for (size_t k = 0; k < n; ++k) {
      const size_t outer = n - 1 - k;  // index into chain, outermost first
      if (n > kOuterParts + kInnerParts + 1 && k == kOuterParts) {
        path += fmt::format(" / ({} more)", n - kOuterParts - kInnerParts);
        k = n - kInnerParts - 1;
        continue;
      }
      if (!path.empty()) path += " / ";
      const int32_t row = res.rows[chain[outer]];
      path += DisplayName(trace, r.name[row], r.domain[row]);
    }
    res.groups[gi].path = std::move(path);
  }
  AddReferenceGroups(context.graphs().GraphPaths(), trace, res);
  const auto name_of = [&](const NvtxRangeGroup& g) {
    return g.from_reference ? g.reference_name : trace.str(g.name);
  };
  std::sort(res.groups.begin(), res.groups.end(),
            [&](const NvtxRangeGroup& a, const NvtxRangeGroup& b) {
              if (a.work.gpu_time_ns() != b.work.gpu_time_ns()) {
                return a.work.gpu_time_ns() > b.work.gpu_time_ns();
              }
              if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
              if (a.depth != b.depth) return a.depth < b.depth;
              if (a.from_reference != b.from_reference) return b.from_reference;
              return name_of(a) < name_of(b);
            });
  return res;
}

Status RunNvtxProjectionSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(NvtxProjectionResult r, ComputeNvtxProjection(context, NvtxProjectionOptions{}));
  Section& s = report.AddSection("nvtx_projection", "NVTX ranges projected onto the GPU", input);
  s.AddFact("ranges", "Ranges (NVTX, annotations)", r.ranges, Unit::kCount);
  s.AddFact("names", "Distinct (name, depth)", static_cast<int64_t>(r.groups.size()), Unit::kCount);
  s.AddFact("kernels_in_ranges", "Kernels launched inside a range", r.kernels_in_ranges,
            Unit::kCount);
  s.AddFact("kernels_in_ranges_pct", "Share of all kernels",
            Pct(static_cast<double>(r.kernels_in_ranges), static_cast<double>(r.kernels)),
            Unit::kPercent);
  s.AddFact("unprojectable_kernels", "Kernels without a launching call", r.unlinked_kernels,
            Unit::kCount);
  if (r.ranges == 0) {
    s.notes.push_back(
        "no NVTX or annotation ranges in this trace: mark code regions (NVTX push/pop, "
        "torch.cuda.nvtx.range, torch.profiler.record_function) to see GPU time per region");
    return Status::Ok();
  }
  if (r.graph_kernels > 0) {
    const auto share = [&](int64_t part) {
      return Pct(static_cast<double>(part), static_cast<double>(r.graph_kernels));
    };
    s.AddFact("graph_kernels", "Kernels replayed from CUDA graphs", r.graph_kernels, Unit::kCount);
    s.AddFact("graph_kernels_with_capture", "Of them, with their node's capture known",
              r.kernels_with_capture, Unit::kCount);
    s.AddFact("graph_kernels_aligned", "Of them, without one but aligned with an eager run",
              r.kernels_aligned, Unit::kCount);
    s.AddFact("kernels_by_capture", "Replayed kernels inside a range at their capture",
              r.kernels_by_capture, Unit::kCount);
    s.AddFact("kernels_by_capture_pct", "Share of replayed kernels", share(r.kernels_by_capture),
              Unit::kPercent);
    s.AddFact("kernels_by_alignment", "Replayed kernels inside a range at their eager counterpart",
              r.kernels_by_alignment, Unit::kCount);
    s.AddFact("kernels_by_alignment_pct", "Share of replayed kernels",
              share(r.kernels_by_alignment), Unit::kPercent);
    if (r.kernels_reference_matched > 0) {
      s.AddFact("kernels_by_reference",
                "Replayed kernels inside a range of the eager reference at their counterpart",
                r.kernels_by_reference, Unit::kCount);
      s.AddFact("kernels_by_reference_pct", "Share of replayed kernels",
                share(r.kernels_by_reference), Unit::kPercent);
    }
    s.AddFact("graph_kernels_unattributed_pct",
              "Share of replayed kernels in no range by either (at their launch only)",
              share(r.graph_kernels_unattributed()), Unit::kPercent);
    if (r.kernels_with_capture + r.kernels_aligned + r.kernels_reference_matched == 0) {
      s.notes.push_back(
          "the CUDA graph kernels here count only in the ranges around their replay: the trace "
          "does not say where their nodes were captured, and no eager run of the same step was "
          "matched. Record with `sightline record`, or nsys --cuda-graph-trace=node with the "
          "capture inside the recorded window, to see them in the ranges that captured them "
          "(docs/analyses/cuda_graphs.md)");
    } else {
      std::string how;
      if (r.kernels_with_capture > 0) {
        how =
            "in the ranges open on the capturing thread when its node was captured (the layer "
            "that captured it)";
      }
      if (r.kernels_aligned > 0) {
        if (!how.empty()) how += " or, without a capture point, ";
        how +=
            "in the ranges around its eager counterpart, the same kernel of the same step run "
            "eagerly, less the eager step's own ranges";
      }
      if (r.kernels_reference_matched > 0) {
        if (!how.empty()) how += " or, without either, ";
        how +=
            "in the ranges of the eager reference trace around its counterpart there, below the "
            "reference's eager step (rows whose path starts \"eager reference:\"; they hold no "
            "range of this trace: count and CPU time 0, no span)";
      }
      s.notes.push_back(fmt::format(
          "a kernel replayed from a CUDA graph counts in the ranges open where it was launched "
          "(the replay) and {}; a range around both counts it once. Of {} replayed kernels, {} "
          "({:.1f}%) are placed by capture, {} ({:.1f}%) by alignment{}, {} ({:.1f}%) by {}",
          how, r.graph_kernels, r.kernels_by_capture, share(r.kernels_by_capture),
          r.kernels_by_alignment, share(r.kernels_by_alignment),
          r.kernels_reference_matched > 0
              ? fmt::format(" in this trace, {} ({:.1f}%) by alignment with the eager reference",
                            r.kernels_by_reference, share(r.kernels_by_reference))
              : std::string(),
          r.graph_kernels_unattributed(), share(r.graph_kernels_unattributed()),
          r.kernels_reference_matched > 0 ? "none" : "neither"));
    }
  }
  if (r.unlinked_kernels > 0) {
    DurationNs kernel_time = 0;
    for (size_t i = 0; i < trace.kernels.size(); ++i) kernel_time += trace.kernels.dur_ns(i);
    s.notes.push_back(fmt::format(
        "{} kernels ({:.1f}% of kernel time) and {} memory operations have no launching API call "
        "in the trace and could not be projected onto ranges (diagnostic kernel_without_launch)",
        r.unlinked_kernels,
        Pct(static_cast<double>(r.unlinked_kernel_time_ns), static_cast<double>(kernel_time)),
        r.unlinked_memops));
  }

  Table& t = s.AddTable("ranges", "Ranges by GPU time of the work they launched",
                        {{"name", "range", Unit::kText},
                         {"depth", "depth", Unit::kNumber},
                         {"count", "count", Unit::kCount},
                         {"cpu_total_ns", "CPU total", Unit::kDurationNs},
                         {"cpu_avg_ns", "CPU avg", Unit::kDurationNs},
                         {"gpu_time_ns", "GPU time", Unit::kDurationNs},
                         {"gpu_avg_ns", "GPU avg", Unit::kDurationNs},
                         {"gpu_span_avg_ns", "span avg", Unit::kDurationNs},
                         {"kernels", "kernels", Unit::kCount},
                         {"memops", "memops", Unit::kCount},
                         {"path", "path", Unit::kText}});
  const size_t keep = std::min(r.groups.size(), static_cast<size_t>(std::max(options.top_n, 0)));
  for (size_t i = 0; i < keep; ++i) {
    const NvtxRangeGroup& g = r.groups[i];
    t.rows.push_back({DisplayName(trace, g), int64_t{g.depth}, g.count, g.cpu_total_ns,
                      AvgNs(g.cpu_total_ns, g.count), g.work.gpu_time_ns(),
                      AvgNs(g.work.gpu_time_ns(), g.count), AvgNs(g.gpu_span_total_ns, g.count),
                      g.work.kernel_count, g.work.memop_count, g.path});
  }
  t.total_rows = static_cast<int64_t>(r.groups.size());
  t.note =
      "GPU time = summed durations of the kernels and memory operations launched (by the range's "
      "thread) inside each range, nested ranges included; GPU span = first start to last end of "
      "that work; path = nesting of the first instance";
  return Status::Ok();
}

}  // namespace sightline
