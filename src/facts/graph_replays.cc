#include "facts/graph_replays.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "model/thread_key.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

enum class CaptureCall : uint8_t { kNone, kBegin, kEnd, kInstantiate };

CaptureCall Classify(std::string_view name) {
  if (name.find("BeginCapture") != std::string_view::npos) return CaptureCall::kBegin;
  if (name.find("EndCapture") != std::string_view::npos) return CaptureCall::kEnd;
  if (name.find("GraphInstantiate") != std::string_view::npos) return CaptureCall::kInstantiate;
  return CaptureCall::kNone;
}

template <typename T>
void Append(std::string& key, const T& v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  key.append(bytes, sizeof(T));
}

// The stream captures of the trace, each with the instantiations after it on its thread.
std::vector<GraphCapture> FindCaptures(const Trace& trace) {
  const ApiCallTable& a = trace.api_calls;
  std::vector<GraphCapture> out;
  std::unordered_map<uint32_t, CaptureCall> kind_of;  // by name id
  std::unordered_map<int64_t, int32_t> open;          // thread -> begin row
  std::unordered_map<int64_t, size_t> last;           // thread -> its last capture in `out`
  std::unordered_map<int64_t, int> seen_correlation;  // a runtime call and its driver call
  for (size_t r = 0; r < a.size(); ++r) {
    auto [known, inserted] = kind_of.try_emplace(a.name[r].value, CaptureCall::kNone);
    if (inserted) known->second = Classify(trace.str(a.name[r]));
    const CaptureCall kind = known->second;
    if (kind == CaptureCall::kNone) continue;
    if (a.correlation[r] >= 0 && ++seen_correlation[a.correlation[r]] > 1) continue;
    const int64_t thread = ThreadKey(a.pid[r], a.tid[r]);
    if (kind == CaptureCall::kBegin) {
      open[thread] = static_cast<int32_t>(r);
    } else if (kind == CaptureCall::kEnd) {
      auto begin = open.find(thread);
      if (begin == open.end()) continue;  // the capture began outside the trace
      GraphCapture& c = out.emplace_back();
      c.pid = a.pid[r];
      c.tid = a.tid[r];
      c.begin_ns = a.start_ns[begin->second];
      c.end_ns = std::max(a.end_ns[r], c.begin_ns);
      last[thread] = out.size() - 1;
      open.erase(begin);
    } else if (auto l = last.find(thread); l != last.end() && open.count(thread) == 0) {
      out[l->second].instantiate_ns += a.dur_ns(r);
    }
  }
  return out;
}

}  // namespace

GraphReplays ComputeGraphReplays(const Trace& trace, const std::vector<uint8_t>& graph) {
  GraphReplays out;
  const KernelTable& k = trace.kernels;
  const ApiCallTable& a = trace.api_calls;
  std::unordered_map<uint32_t, bool> whole_name;  // by name id
  auto is_whole = [&](size_t i) {
    auto [it, inserted] = whole_name.try_emplace(k.name[i].value, false);
    if (inserted) it->second = IsWholeGraphName(trace.str(k.name[i]));
    return it->second;
  };
  // The kernel rows of each replay: by launching call, else correlation, else alone.
  std::map<std::pair<int, int64_t>, size_t> replay_of;
  std::vector<std::vector<int32_t>> rows;
  for (size_t i = 0; i < k.size(); ++i) {
    if ((i >= graph.size() || !graph[i]) && !is_whole(i)) continue;
    const std::pair<int, int64_t> key =
        k.launch_call[i] != kNoRow ? std::pair<int, int64_t>{0, k.launch_call[i]}
        : k.correlation[i] >= 0    ? std::pair<int, int64_t>{1, k.correlation[i]}
                                   : std::pair<int, int64_t>{2, static_cast<int64_t>(i)};
    auto [it, inserted] = replay_of.try_emplace(key, rows.size());
    if (inserted) rows.emplace_back();
    rows[it->second].push_back(static_cast<int32_t>(i));
  }
  std::vector<std::string> keys(rows.size());
  out.replays.resize(rows.size());
  for (size_t p = 0; p < rows.size(); ++p) {
    std::vector<int32_t>& rs = rows[p];
    std::sort(rs.begin(), rs.end(), [&](int32_t x, int32_t y) {
      return std::pair(k.start_ns[x], x) < std::pair(k.start_ns[y], y);
    });
    GraphReplay& g = out.replays[p];
    const int32_t first = rs.front();
    g.device = k.device[first];
    g.gpu_start_ns = k.start_ns[first];
    g.gpu_end_ns = k.end_ns[first];
    g.launch_call = k.launch_call[first];
    if (g.launch_call != kNoRow) {
      g.pid = a.pid[g.launch_call];
      g.tid = a.tid[g.launch_call];
      g.launch_ns = a.start_ns[g.launch_call];
      g.launch_end_ns = a.end_ns[g.launch_call];
    }
    int64_t min_capture = 0, min_node = 0;
    for (int32_t r : rs) {
      g.gpu_end_ns = std::max(g.gpu_end_ns, k.end_ns[r]);
      g.gpu_ns += k.dur_ns(r);
      g.whole = g.whole || is_whole(r);
      if (k.capture_node[r] > 0 && (min_capture == 0 || k.capture_node[r] < min_capture)) {
        min_capture = k.capture_node[r];
      }
      if (k.graph_node[r] > 0 && (min_node == 0 || k.graph_node[r] < min_node)) {
        min_node = k.graph_node[r];
      }
    }
    g.kernels = static_cast<int64_t>(rs.size());
    // Which graph: a whole-graph row names it; captured nodes are the graph's own; instantiated
    // nodes, the executable's; else the kernels themselves, in GPU order.
    std::string& key = keys[p];
    if (g.whole) {
      key = "w";
      Append(key, k.name[first].value);
    } else if (min_capture > 0) {
      key = "c";
      Append(key, min_capture);
    } else if (min_node > 0) {
      key = "n";
      Append(key, min_node);
    } else {
      key = "s";
      Append(key, g.kernels);
      for (size_t j = 0; j < std::min(rs.size(), kMaxSignatureKernels); ++j) {
        Append(key, k.name[rs[j]].value);
        Append(key, k.grid[rs[j]]);
        Append(key, k.block[rs[j]]);
      }
    }
  }
  // Launch order (GPU order where the launch is unknown).
  std::vector<size_t> order(out.replays.size());
  for (size_t p = 0; p < order.size(); ++p) order[p] = p;
  auto when = [&](size_t p) {
    const GraphReplay& g = out.replays[p];
    return g.launch_ns >= 0 ? g.launch_ns : g.gpu_start_ns;
  };
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return std::pair(when(x), x) < std::pair(when(y), y); });
  std::vector<GraphReplay> sorted;
  sorted.reserve(order.size());
  std::map<std::string, int32_t> variant_of;
  for (size_t p : order) {
    GraphReplay g = out.replays[p];
    auto [it, inserted] =
        variant_of.try_emplace(keys[p], static_cast<int32_t>(out.variants.size()));
    if (inserted) {
      GraphVariant& v = out.variants.emplace_back();
      v.kernels_per_replay = g.kernels;
      if (g.whole) {
        const std::string_view name = trace.str(k.name[rows[p].front()]);
        v.label =
            std::string(name.substr(0, name.size() - std::string_view(" (whole graph)").size()));
      } else {
        v.label = fmt::format("graph {} ({} kernels)", out.variants.size(), g.kernels);
      }
    }
    g.variant = it->second;
    GraphVariant& v = out.variants[g.variant];
    ++v.replays;
    v.gpu_ns += g.gpu_ns;
    for (int32_t r : rows[p]) {
      if (k.capture_node[r] == 0 || k.capture_ns[r] < 0) continue;
      if (v.capture_pid < 0) {
        v.capture_pid = k.capture_pid[r];
        v.capture_tid = k.capture_tid[r];
      }
      if (k.capture_pid[r] != v.capture_pid || k.capture_tid[r] != v.capture_tid) continue;
      v.capture_first_ns =
          v.capture_first_ns < 0 ? k.capture_ns[r] : std::min(v.capture_first_ns, k.capture_ns[r]);
      v.capture_last_ns = std::max(v.capture_last_ns, k.capture_ns[r]);
    }
    sorted.push_back(g);
  }
  out.replays = std::move(sorted);

  // The capture that created each variant's nodes: on its thread, the one around its first
  // capture time (captures of one thread do not overlap).
  out.captures = FindCaptures(trace);
  std::unordered_map<int64_t, std::vector<int32_t>> by_thread;  // in begin order
  for (size_t c = 0; c < out.captures.size(); ++c) {
    by_thread[ThreadKey(out.captures[c].pid, out.captures[c].tid)].push_back(
        static_cast<int32_t>(c));
  }
  for (size_t vi = 0; vi < out.variants.size(); ++vi) {
    GraphVariant& v = out.variants[vi];
    if (v.capture_first_ns < 0) continue;
    auto th = by_thread.find(ThreadKey(v.capture_pid, v.capture_tid));
    if (th == by_thread.end()) continue;
    const std::vector<int32_t>& cs = th->second;
    auto at = std::upper_bound(cs.begin(), cs.end(), v.capture_first_ns,
                               [&](TimeNs t, int32_t c) { return t < out.captures[c].begin_ns; });
    if (at == cs.begin()) continue;
    GraphCapture& cap = out.captures[*(at - 1)];
    if (v.capture_first_ns > cap.end_ns) continue;
    v.capture = *(at - 1);
    if (cap.variant < 0) cap.variant = static_cast<int32_t>(vi);
  }
  return out;
}

}  // namespace sightline
