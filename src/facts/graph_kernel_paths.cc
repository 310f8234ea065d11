#include "facts/graph_kernel_paths.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "model/thread_key.h"

namespace sightline {

bool IsCaptureRangeKind(RangeKind k) {
  return k == RangeKind::kNvtxPushPop || k == RangeKind::kNvtxStartEnd ||
         k == RangeKind::kUserAnnotation;
}

const char* PathSourceName(PathSource source) {
  switch (source) {
    case PathSource::kCapture:
      return "capture";
    case PathSource::kAligned:
      return "aligned";
    case PathSource::kReference:
      return "reference";
    case PathSource::kNone:
      break;
  }
  return "none";
}

GraphKernelPaths ComputeGraphKernelPaths(const Trace& trace, const Trace* eager_reference) {
  GraphKernelPaths out;
  const KernelTable& k = trace.kernels;
  out.graph = GraphKernelRows(trace);
  if (std::find(out.graph.begin(), out.graph.end(), 1) == out.graph.end()) return out;
  out.source.assign(k.size(), PathSource::kNone);
  out.path.assign(k.size(), -1);
  out.alignment = AlignGraphKernels(trace, out.graph);
  if (eager_reference != nullptr && eager_reference != &trace) {
    out.reference_alignment =
        AlignGraphKernelsWithReference(trace, out.graph, *eager_reference, &out.alignment);
  }

  std::map<std::string, int32_t> path_index;
  std::set<int32_t> capture_roots;
  // The paths of host ranges open at points of one trace (this one, or the eager reference).
  struct Walker {
    const Trace* trace;
    const GraphAlignment* alignment;  // whose eager_runs a `run` indexes
    std::unordered_map<int64_t, std::vector<int32_t>> by_thread;  // ranges per thread, by start
    // One path per point, however many replays: (pid, tid, t, run) -> path.
    std::map<std::tuple<int32_t, int32_t, TimeNs, int32_t>, int32_t> memo;
  };
  auto walker = [](const Trace& t, const GraphAlignment& alignment) {
    Walker w{&t, &alignment, {}, {}};
    const RangeTable& r = t.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (IsCaptureRangeKind(r.kind[i]))
        w.by_thread[ThreadKey(r.pid[i], r.tid[i])].push_back(static_cast<int32_t>(i));
    }
    return w;
  };
  std::vector<std::string_view> names;
  // The path of host ranges open on (pid, tid) at t, outermost first. With `run` (an aligned
  // kernel's eager counterpart), the ranges holding the whole eager run are left out: they are
  // the step, not the kernel's place.
  auto path_at = [&](Walker& w, int32_t pid, int32_t tid, TimeNs t, int32_t run) -> int32_t {
    auto [it, inserted] = w.memo.try_emplace({pid, tid, t, run}, -1);
    if (!inserted) return it->second;
    const RangeTable& r = w.trace->ranges;
    names.clear();
    auto th = w.by_thread.find(ThreadKey(pid, tid));
    if (th != w.by_thread.end()) {
      const std::vector<int32_t>& rows = th->second;
      // The last range that starts at or before t; the ranges open at t are it or its ancestors.
      auto at = std::upper_bound(rows.begin(), rows.end(), t,
                                 [&](TimeNs v, int32_t row) { return v < r.start_ns[row]; });
      int32_t row = at == rows.begin() ? kNoRow : *(at - 1);
      int32_t root = kNoRow;
      // Walk up: a range that ended before t is not open; its parent may be. Bounded by the
      // depth. A sibling that started later than an ended range may hold t while the
      // last-starting range does not: ranges open at t that started earlier are among the
      // ancestors when ranges nest (the usual case).
      for (int32_t walked = 0; row != kNoRow && walked < kMaxPathDepth; ++walked) {
        const bool whole_run = run >= 0 &&
                               r.start_ns[row] <= w.alignment->eager_runs[run].first_launch_ns &&
                               r.end_ns[row] > w.alignment->eager_runs[run].last_launch_ns;
        if (r.end_ns[row] > t && IsCaptureRangeKind(r.kind[row]) && !whole_run) {
          names.push_back(w.trace->str(r.name[row]));
          root = row;
        }
        row = r.parent[row];
      }
      if (root != kNoRow && run < 0) capture_roots.insert(root);
    }
    std::reverse(names.begin(), names.end());
    std::string p;
    for (std::string_view n : names) {
      if (!p.empty()) p += " > ";
      p += n;
    }
    auto [pi, added] = path_index.try_emplace(std::move(p), static_cast<int32_t>(out.paths.size()));
    if (added) {
      out.paths.push_back(pi->first);
      out.components.push_back(names);
    }
    it->second = pi->second;
    return it->second;
  };

  Walker own = walker(trace, out.alignment);
  std::optional<Walker> ref;
  if (!out.reference_alignment.counterpart.empty()) {
    ref = walker(*eager_reference, out.reference_alignment);
  }
  const ApiCallTable& api = trace.api_calls;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!out.graph[i]) continue;
    if (k.capture_ns[i] >= 0) {
      out.source[i] = PathSource::kCapture;
      out.path[i] = path_at(own, k.capture_pid[i], k.capture_tid[i], k.capture_ns[i], -1);
    } else if (!out.alignment.counterpart.empty() && out.alignment.counterpart[i] != kNoRow) {
      out.source[i] = PathSource::kAligned;
      const int32_t call = k.launch_call[out.alignment.counterpart[i]];
      out.path[i] = path_at(own, api.pid[call], api.tid[call], api.start_ns[call],
                            out.alignment.eager_run[i]);
    } else if (ref && out.reference_alignment.counterpart[i] != kNoRow) {
      out.source[i] = PathSource::kReference;
      const Trace& e = *eager_reference;
      const int32_t call = e.kernels.launch_call[out.reference_alignment.counterpart[i]];
      out.path[i] = path_at(*ref, e.api_calls.pid[call], e.api_calls.tid[call],
                            e.api_calls.start_ns[call], out.reference_alignment.eager_run[i]);
    }
  }
  out.capture_roots.assign(capture_roots.begin(), capture_roots.end());
  return out;
}

}  // namespace sightline
