#include "facts/graph_alignment.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "facts/lcs.h"
#include "model/thread_key.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

// The kernels one thread launched eagerly, in launch order, and where each anchor name occurs.
struct EagerStream {
  int32_t pid = 0, tid = 0;
  std::vector<int32_t> rows;                                    // kernel rows
  std::vector<uint32_t> names;                                  // their full-name ids
  std::unordered_map<uint32_t, std::vector<uint32_t>> anchors;  // name -> positions
};

// The first kernels of a sequence anchor the search: a replay whose first few kernels are not
// in the eager run (a copy node, a kernel added by the capture) still finds it.
constexpr size_t kAnchors = 4;
// Places compared while searching and table cells filled while refining, all sequences together
// (a bound on the work for huge or hostile traces: about a second); sequences past it are left
// unmatched and counted.
constexpr int64_t kWorkBudget = 400'000'000;
// The longest sequence refined by the longest common subsequence (its table is m x (m + slack)).
constexpr size_t kMaxRefined = 1024;

}  // namespace

std::vector<uint8_t> GraphKernelRows(const Trace& trace) {
  const KernelTable& k = trace.kernels;
  const ApiCallTable& a = trace.api_calls;
  std::vector<uint8_t> graph_call(a.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    graph_call[i] = trace.str(a.name[i]).find("GraphLaunch") != std::string_view::npos;
  }
  std::vector<uint8_t> out(k.size(), 0);
  for (size_t i = 0; i < k.size(); ++i) {
    const bool from_graph =
        k.graph_node[i] != 0 ||
        (k.launch_call[i] != kNoRow && graph_call[static_cast<size_t>(k.launch_call[i])]);
    out[i] = from_graph && !IsWholeGraphName(trace.str(k.name[i]));
  }
  return out;
}

GraphAlignment AlignGraphKernels(const Trace& trace) {
  return AlignGraphKernels(trace, GraphKernelRows(trace));
}

namespace {

// Aligns the replays of `trace` (graph kernels without a capture point, less those of replays
// `in_trace` matched) with the eager kernels of `eager_trace` (`trace` itself, or a reference).
// Names are compared as text: a reference name is looked up in `trace`'s pool once.
GraphAlignment Align(const Trace& trace, const std::vector<uint8_t>& graph,
                     const Trace& eager_trace, const std::vector<uint8_t>& eager_graph,
                     const GraphAlignment* in_trace) {
  GraphAlignment out;
  out.reference = &eager_trace != &trace;
  const KernelTable& k = trace.kernels;

  // The replays: graph kernels without a capture point, by launching call (or correlation).
  std::map<std::pair<int, int64_t>, std::vector<int32_t>> replays;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!graph[i] || k.capture_ns[i] >= 0) continue;
    const std::pair<int, int64_t> key =
        k.launch_call[i] != kNoRow ? std::pair<int, int64_t>{0, k.launch_call[i]}
        : k.correlation[i] >= 0    ? std::pair<int, int64_t>{1, k.correlation[i]}
                                   : std::pair<int, int64_t>{2, static_cast<int64_t>(i)};
    replays[key].push_back(static_cast<int32_t>(i));
  }
  if (in_trace != nullptr && !in_trace->counterpart.empty()) {
    // A replay matched in its own trace keeps that match (the same clock, the same run).
    std::erase_if(replays, [&](const auto& entry) {
      return std::any_of(entry.second.begin(), entry.second.end(),
                         [&](int32_t row) { return in_trace->counterpart[row] != kNoRow; });
    });
  }
  for (const auto& [key, rows] : replays) out.kernels += static_cast<int64_t>(rows.size());
  if (out.kernels == 0) return out;
  out.replays = static_cast<int64_t>(replays.size());
  out.counterpart.assign(k.size(), kNoRow);
  out.eager_run.assign(k.size(), -1);

  // Replays with the same kernels in the same GPU order are one sequence, aligned once.
  std::map<std::vector<uint32_t>, std::vector<const std::vector<int32_t>*>> sequences;
  for (auto& [key, rows] : replays) {
    std::sort(rows.begin(), rows.end(), [&](int32_t x, int32_t y) {
      return std::pair(k.start_ns[x], x) < std::pair(k.start_ns[y], y);
    });
    std::vector<uint32_t> names(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) names[i] = k.name[rows[i]].value;
    sequences[std::move(names)].push_back(&rows);
  }
  out.sequences = static_cast<int64_t>(sequences.size());
  std::unordered_set<uint32_t> anchor_names;
  for (const auto& [names, unused] : sequences) {
    for (size_t j = 0; j < std::min(kAnchors, names.size()); ++j) anchor_names.insert(names[j]);
  }

  // The eager kernels per launching thread, in launch order (the API table is sorted by start).
  const KernelTable& ek = eager_trace.kernels;
  const ApiCallTable& a = eager_trace.api_calls;
  std::vector<int32_t> eager;
  for (size_t i = 0; i < ek.size(); ++i) {
    if (!eager_graph[i] && ek.launch_call[i] != kNoRow &&
        !IsWholeGraphName(eager_trace.str(ek.name[i]))) {
      eager.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(eager.begin(), eager.end(), [&](int32_t x, int32_t y) {
    return std::pair(ek.launch_call[x], x) < std::pair(ek.launch_call[y], y);
  });
  // A reference's name ids, as ids of `trace` (a name `trace` lacks matches no replayed kernel).
  constexpr uint32_t kForeign = UINT32_MAX;
  std::unordered_map<uint32_t, uint32_t> name_in_trace;
  auto name_of = [&](int32_t row) -> uint32_t {
    const uint32_t id = ek.name[row].value;
    if (!out.reference) return id;
    auto [it, inserted] = name_in_trace.try_emplace(id, kForeign);
    StringId found;
    if (inserted && trace.strings.Find(eager_trace.str(ek.name[row]), &found)) {
      it->second = found.value;
    }
    return it->second;
  };
  std::vector<EagerStream> streams;
  std::unordered_map<int64_t, size_t> stream_of;
  for (int32_t row : eager) {
    const int32_t call = ek.launch_call[row];
    auto [it, inserted] =
        stream_of.try_emplace(ThreadKey(a.pid[call], a.tid[call]), streams.size());
    if (inserted) streams.push_back({a.pid[call], a.tid[call], {}, {}, {}});
    EagerStream& s = streams[it->second];
    const uint32_t name = name_of(row);
    if (anchor_names.count(name) > 0) {
      s.anchors[name].push_back(static_cast<uint32_t>(s.rows.size()));
    }
    s.rows.push_back(row);
    s.names.push_back(name);
  }

  int64_t budget = kWorkBudget;
  for (const auto& [names, members] : sequences) {
    const size_t m = names.size();
    if (budget <= 0) {
      ++out.sequences_cut;
      continue;
    }
    // The eager run that agrees with the sequence at the most places.
    int64_t best_score = -1;
    size_t best_stream = 0, best_start = 0;
    for (size_t t = 0; t < streams.size() && best_score < static_cast<int64_t>(m); ++t) {
      const EagerStream& s = streams[t];
      for (size_t j = 0;
           j < std::min(kAnchors, m) && budget > 0 && best_score < static_cast<int64_t>(m); ++j) {
        auto at = s.anchors.find(names[j]);
        if (at == s.anchors.end()) continue;
        for (uint32_t p : at->second) {
          if (p < j || budget <= 0) continue;
          const size_t c = p - j;
          int64_t score = 0;
          for (size_t i = 0; i < m && c + i < s.names.size(); ++i)
            score += s.names[c + i] == names[i];
          budget -= static_cast<int64_t>(m);
          if (score > best_score) {
            best_score = score;
            best_stream = t;
            best_start = c;
            if (score == static_cast<int64_t>(m)) break;
          }
        }
      }
    }
    if (best_score <= 0) continue;
    const EagerStream& s = streams[best_stream];
    // map[i]: position in the stream matched with kernel i of the sequence, or -1.
    std::vector<int64_t> map(m, -1);
    if (best_score == static_cast<int64_t>(m) || m > kMaxRefined) {
      for (size_t i = 0; i < m && best_start + i < s.names.size(); ++i) {
        if (s.names[best_start + i] == names[i]) map[i] = static_cast<int64_t>(best_start + i);
      }
    } else {
      const size_t slack = std::max<size_t>(8, m / 8);
      const size_t lo = best_start > slack ? best_start - slack : 0;
      const size_t hi = std::min(s.names.size(), best_start + m + slack);
      budget -= static_cast<int64_t>(m * (hi - lo));
      const std::vector<int32_t> lcs =
          LongestCommonSubsequence(names, s.names.data() + lo, hi - lo);
      for (size_t i = 0; i < m; ++i) {
        if (lcs[i] >= 0) map[i] = static_cast<int64_t>(lo) + lcs[i];
      }
    }
    const int64_t matched = std::count_if(map.begin(), map.end(), [](int64_t p) { return p >= 0; });
    if (2 * matched < static_cast<int64_t>(m)) continue;
    GraphAlignment::EagerRun run{s.pid, s.tid, INT64_MAX, INT64_MIN};
    for (int64_t p : map) {
      if (p < 0) continue;
      const TimeNs launch = a.start_ns[ek.launch_call[s.rows[p]]];
      run.first_launch_ns = std::min(run.first_launch_ns, launch);
      run.last_launch_ns = std::max(run.last_launch_ns, launch);
    }
    const auto run_index = static_cast<int32_t>(out.eager_runs.size());
    out.eager_runs.push_back(run);
    ++out.sequences_matched;
    for (const std::vector<int32_t>* rows : members) {
      ++out.replays_matched;
      for (size_t i = 0; i < m; ++i) {
        if (map[i] < 0) continue;
        out.counterpart[(*rows)[i]] = s.rows[map[i]];
        out.eager_run[(*rows)[i]] = run_index;
        ++out.kernels_matched;
      }
    }
  }
  return out;
}

}  // namespace

GraphAlignment AlignGraphKernels(const Trace& trace, const std::vector<uint8_t>& graph) {
  return Align(trace, graph, trace, graph, nullptr);
}

GraphAlignment AlignGraphKernelsWithReference(const Trace& trace, const std::vector<uint8_t>& graph,
                                              const Trace& reference,
                                              const GraphAlignment* in_trace) {
  if (&reference == &trace) return {};
  return Align(trace, graph, reference, GraphKernelRows(reference), in_trace);
}

}  // namespace sightline
