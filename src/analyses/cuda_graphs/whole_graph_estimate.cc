#include "analyses/cuda_graphs/whole_graph_estimate.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "facts/graph_alignment.h"
#include "facts/lcs.h"
#include "model/thread_key.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

bool IsKernelLaunchCall(std::string_view name) {
  return name.find("LaunchKernel") != std::string_view::npos ||
         name.find("LaunchCooperativeKernel") != std::string_view::npos;
}

// "CUDA graph 12 (whole graph)" -> 12; -1 when the name holds no number.
int64_t GraphIdOf(std::string_view name) {
  constexpr std::string_view kPrefix = "CUDA graph ";
  if (!name.starts_with(kPrefix)) return -1;
  int64_t id = -1;
  const char* first = name.data() + kPrefix.size();
  const auto [end, ec] = std::from_chars(first, name.data() + name.size(), id);
  return ec == std::errc() && end != first ? id : -1;
}

// Ranges that name code (NVTX, annotations); operators and Python frames do not.
bool NamesCode(RangeKind kind) {
  return kind != RangeKind::kCpuOp && kind != RangeKind::kPythonFunction;
}

// A bound on the alignment's work (table cells filled), all graphs together: about a second.
constexpr int64_t kWorkBudget = 400'000'000;
// The longest capture aligned by the longest common subsequence; longer ones compare places.
constexpr size_t kMaxRefined = 2048;
// Eager runs whose match is at least this share of the best one's are averaged.
constexpr double kNearBest = 0.9;

// The innermost range open at a time on a thread (ranges nest on their thread: the latest one
// started before t, else its enclosing ones).
class RangeLocator {
 public:
  explicit RangeLocator(const Trace& trace) : r_(trace.ranges) {
    for (size_t i = 0; i < r_.size(); ++i) {
      by_thread_[ThreadKey(r_.pid[i], r_.tid[i])].push_back(static_cast<int32_t>(i));
    }
    for (auto& [key, rows] : by_thread_) {
      std::stable_sort(rows.begin(), rows.end(),
                       [&](int32_t a, int32_t b) { return r_.start_ns[a] < r_.start_ns[b]; });
    }
  }
  int32_t Innermost(int32_t pid, int32_t tid, TimeNs t) const {
    const auto it = by_thread_.find(ThreadKey(pid, tid));
    if (it == by_thread_.end()) return kNoRow;
    const std::vector<int32_t>& rows = it->second;
    auto after = std::upper_bound(rows.begin(), rows.end(), t,
                                  [&](TimeNs x, int32_t row) { return x < r_.start_ns[row]; });
    if (after == rows.begin()) return kNoRow;
    int32_t row = *(after - 1);
    for (int hops = 0; row != kNoRow && r_.end_ns[row] <= t && hops < 256; ++hops) {
      row = r_.parent[row];
    }
    return row != kNoRow && r_.end_ns[row] > t ? row : kNoRow;
  }

 private:
  const RangeTable& r_;
  std::unordered_map<int64_t, std::vector<int32_t>> by_thread_;
};

// The names of the code ranges from `innermost` outwards to, not including, the first range for
// which stop(row) holds, joined outermost first ("layer_3 > attention"); "(no range)" when none.
template <class Stop>
std::string PathBelow(const Trace& trace, int32_t innermost, Stop stop) {
  const RangeTable& r = trace.ranges;
  std::vector<int32_t> chain;
  for (int32_t row = innermost; row != kNoRow && !stop(row) && chain.size() < 256;
       row = r.parent[row]) {
    if (NamesCode(r.kind[row])) chain.push_back(row);
  }
  if (chain.empty()) return "(no range)";
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!out.empty()) out += " > ";
    out += trace.str(r.name[*it]);
  }
  return out;
}

struct Window {
  int32_t pid = -1, tid = -1;
  TimeNs start_ns = 0, end_ns = 0;
};

// BeginCapture .. EndCapture pairs per thread, by start.
std::vector<Window> CaptureWindows(const Trace& trace) {
  const ApiCallTable& a = trace.api_calls;
  std::unordered_map<int64_t, std::vector<size_t>> open;
  std::vector<Window> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view name = trace.str(a.name[i]);
    if (name.find("BeginCapture") != std::string_view::npos) {
      open[ThreadKey(a.pid[i], a.tid[i])].push_back(i);
    } else if (name.find("EndCapture") != std::string_view::npos) {
      std::vector<size_t>& begins = open[ThreadKey(a.pid[i], a.tid[i])];
      if (begins.empty()) continue;
      const size_t b = begins.back();
      begins.pop_back();
      out.push_back({a.pid[i], a.tid[i], a.start_ns[b], a.end_ns[i]});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Window& x, const Window& y) { return x.start_ns < y.start_ns; });
  return out;
}

// The step holding an instant of a process: the latest one starting at or before it that has not
// ended (a loop's steps do not overlap; a hostile log's may, so the search looks back a bounded
// number of steps).
class StepLocator {
 public:
  explicit StepLocator(const StepBatches& batches) : steps_(batches.steps) {
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const StepBatches::Step& a, const StepBatches::Step& b) {
                       return a.start_ns < b.start_ns;
                     });
  }
  const StepBatches::Step* At(int32_t pid, TimeNs t) const {
    constexpr int kLookBack = 64;
    auto it = std::upper_bound(steps_.begin(), steps_.end(), t,
                               [](TimeNs x, const StepBatches::Step& s) { return x < s.start_ns; });
    for (int hops = 0; it != steps_.begin() && hops < kLookBack; ++hops) {
      --it;
      if (it->end_ns > t && (it->pid < 0 || pid < 0 || it->pid == pid)) return &*it;
    }
    return nullptr;
  }

 private:
  std::vector<StepBatches::Step> steps_;
};

// One launching thread's eager kernels, in launch order.
struct EagerThread {
  int32_t pid = 0, tid = 0;
  std::vector<TimeNs> launch_ns;
  std::vector<int32_t> innermost;  // the innermost range open at each launch
  std::vector<DurationNs> dur_ns;  // the kernel's GPU duration
};

// A graph's batch size from the steps holding its runs (launch times `at`): the graph batch they
// name most often (ties: the smaller), else the largest real batch among them.
void GraphBatch(const StepLocator& steps, const std::vector<TimeNs>& at, WholeGraphEstimate& out,
                WholeGraphEstimate::Graph& g) {
  std::map<int64_t, int64_t> named;  // graph batch -> runs
  int64_t largest_real = -1;
  for (const TimeNs t : at) {
    const StepBatches::Step* step = steps.At(g.pid, t);
    if (step == nullptr || (step->graph_batch <= 0 && step->batch <= 0)) {
      ++out.runs_without_batch;
      continue;
    }
    ++g.runs_in_steps;
    if (step->graph_batch > 0) ++named[step->graph_batch];
    if (step->batch > 0) largest_real = std::max(largest_real, step->batch);
  }
  if (!named.empty()) {
    int64_t most = 0;
    for (const auto& [batch, runs] : named) {
      if (runs > most) most = runs, g.batch = batch;
    }
    g.batch_source = GraphBatchSource::kGraphBatch;
    for (const auto& [batch, runs] : named) {
      if (batch != g.batch) g.runs_other_batch += runs;
    }
  } else if (largest_real > 0) {
    g.batch = largest_real;
    g.batch_source = GraphBatchSource::kLargestRealBatch;
  }
}

}  // namespace

const char* EagerSelectionName(EagerSelection selection) {
  switch (selection) {
    case EagerSelection::kAll:
      return "all";
    case EagerSelection::kOfBatch:
      return "of_batch";
    case EagerSelection::kAllNoneOfBatch:
      return "all_none_of_batch";
    case EagerSelection::kAllGraphUnknown:
      return "all_graph_batch_unknown";
    case EagerSelection::kAllNoEagerBatch:
      return "all_eager_batch_unknown";
  }
  return "all";
}

WholeGraphEstimate EstimateWholeGraphs(const Trace& trace, const Trace* eager_reference,
                                       const StepBatches* batches) {
  WholeGraphEstimate out;
  const KernelTable& k = trace.kernels;
  const ApiCallTable& a = trace.api_calls;
  const RangeTable& r = trace.ranges;
  // The eager runs: of the trace itself, or of a second one (the same program run eagerly).
  const Trace& e = eager_reference != nullptr ? *eager_reference : trace;
  out.eager_reference = eager_reference != nullptr;
  const KernelTable& ek = e.kernels;
  const ApiCallTable& ea = e.api_calls;
  const RangeTable& er = e.ranges;

  out.step_batches = batches != nullptr;
  std::optional<StepLocator> steps;
  if (batches != nullptr) steps.emplace(*batches);

  // The whole-graph runs, per (process, graph id): their GPU durations, and when each was
  // launched (the launching call's start; without one, the run's GPU start).
  struct Runs {
    std::vector<DurationNs> dur_ns;
    std::vector<TimeNs> at_ns;
  };
  std::map<std::pair<int32_t, int64_t>, Runs> runs;
  for (size_t i = 0; i < k.size(); ++i) {
    const std::string_view name = trace.str(k.name[i]);
    if (!IsWholeGraphName(name)) continue;
    ++out.whole_runs;
    const int32_t call = k.launch_call[i];
    const int32_t pid = call != kNoRow ? a.pid[call] : k.pid[i];
    Runs& of = runs[{pid, GraphIdOf(name)}];
    of.dur_ns.push_back(k.end_ns[i] - k.start_ns[i]);
    of.at_ns.push_back(call != kNoRow ? a.start_ns[call] : k.start_ns[i]);
  }
  if (runs.empty()) return out;

  const std::vector<Window> windows = CaptureWindows(trace);
  out.capture_windows = static_cast<int64_t>(windows.size());
  std::map<int32_t, std::vector<Window>> windows_of;
  std::unordered_map<int64_t, std::vector<Window>> windows_on_thread;  // each by start
  for (const Window& w : windows) {
    windows_of[w.pid].push_back(w);
    windows_on_thread[ThreadKey(w.pid, w.tid)].push_back(w);
  }
  // Each graph's first creation record.
  std::map<std::pair<int32_t, int64_t>, GraphCreation> creation_of;
  for (const GraphCreation& c : trace.graph_creations)
    creation_of.try_emplace({c.pid, c.graph_id}, c);
  std::map<int32_t, int64_t> graphs_of;
  for (const auto& [key, of] : runs) ++graphs_of[key.first];

  const RangeLocator locator(trace);
  std::optional<RangeLocator> reference_locator;
  if (eager_reference != nullptr) reference_locator.emplace(e);
  const RangeLocator& eager_locator = reference_locator ? *reference_locator : locator;
  // The eager kernels per launching thread, and how many launches each range holds.
  const std::vector<uint8_t> graph_rows = GraphKernelRows(e);
  std::vector<int32_t> eager;
  for (size_t i = 0; i < ek.size(); ++i) {
    if (!graph_rows[i] && ek.launch_call[i] != kNoRow && !IsWholeGraphName(e.str(ek.name[i]))) {
      eager.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(eager.begin(), eager.end(), [&](int32_t x, int32_t y) {
    return std::pair(ek.launch_call[x], x) < std::pair(ek.launch_call[y], y);
  });
  std::vector<EagerThread> threads;
  std::unordered_map<int64_t, size_t> thread_of;
  std::vector<int64_t> launches_in(er.size(), 0);
  for (int32_t row : eager) {
    const int32_t call = ek.launch_call[row];
    auto [it, inserted] =
        thread_of.try_emplace(ThreadKey(ea.pid[call], ea.tid[call]), threads.size());
    if (inserted) threads.push_back({ea.pid[call], ea.tid[call], {}, {}, {}});
    EagerThread& t = threads[it->second];
    const int32_t inner = eager_locator.Innermost(ea.pid[call], ea.tid[call], ea.start_ns[call]);
    t.launch_ns.push_back(ea.start_ns[call]);
    t.innermost.push_back(inner);
    t.dur_ns.push_back(ek.end_ns[row] - ek.start_ns[row]);
    for (int32_t x = inner, hops = 0; x != kNoRow && hops < 256; x = er.parent[x], ++hops) {
      ++launches_in[x];
    }
  }
  // The code ranges holding eager launches, by how many (candidate eager runs are looked up by
  // their count).
  std::vector<int32_t> by_launches;
  for (size_t x = 0; x < er.size(); ++x) {
    if (launches_in[x] > 0 && NamesCode(er.kind[x])) {
      by_launches.push_back(static_cast<int32_t>(x));
    }
  }
  std::stable_sort(by_launches.begin(), by_launches.end(),
                   [&](int32_t x, int32_t y) { return launches_in[x] < launches_in[y]; });
  // API rows that launched a kernel of their own: not captured.
  std::vector<uint8_t> launched(a.size(), 0);
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.launch_call[i] != kNoRow) launched[static_cast<size_t>(k.launch_call[i])] = 1;
  }

  std::unordered_map<std::string, uint32_t> token_ids;
  auto token = [&](std::string path) {
    return token_ids.try_emplace(std::move(path), static_cast<uint32_t>(token_ids.size()))
        .first->second;
  };
  int64_t budget = kWorkBudget;
  std::map<int32_t, size_t> next_window;  // per process: graphs paired so far
  for (const auto& [key, of] : runs) {
    WholeGraphEstimate::Graph& g = out.graphs.emplace_back();
    g.pid = key.first;
    g.graph_id = key.second;
    g.runs = static_cast<int64_t>(of.dur_ns.size());
    std::vector<DurationNs> sorted = of.dur_ns;
    std::sort(sorted.begin(), sorted.end());
    g.median_run_ns = sorted[sorted.size() / 2];
    if (steps) GraphBatch(*steps, of.at_ns, out, g);
    const std::vector<Window>& ws = windows_of[g.pid];
    std::optional<Window> found;
    const auto created = creation_of.find({g.pid, g.graph_id});
    if (created != creation_of.end()) {
      // The window on the creating thread that holds the creation: the last one starting
      // before it (a thread's captures do not overlap).
      const auto on_thread = windows_on_thread.find(ThreadKey(g.pid, created->second.tid));
      if (on_thread != windows_on_thread.end()) {
        const std::vector<Window>& tw = on_thread->second;
        const TimeNs t = created->second.time_ns;
        auto after = std::upper_bound(tw.begin(), tw.end(), t,
                                      [](TimeNs x, const Window& w) { return x < w.start_ns; });
        if (after != tw.begin() && (after - 1)->end_ns >= t) {
          found = *(after - 1);
          g.by_creation = true;
        }
      }
    } else if (static_cast<int64_t>(ws.size()) == graphs_of[g.pid] && g.graph_id >= 0) {
      found = ws[next_window[g.pid]++];
    }
    if (!found) continue;
    const Window w = *found;
    g.paired = true;
    ++out.graphs_paired;
    g.capture_start_ns = w.start_ns;
    g.capture_end_ns = w.end_ns;
    for (int32_t x = locator.Innermost(w.pid, w.tid, w.start_ns), hops = 0;
         x != kNoRow && hops < 256; x = r.parent[x], ++hops) {
      if (NamesCode(r.kind[x]) && r.start_ns[x] <= w.start_ns && r.end_ns[x] >= w.end_ns) {
        g.capture_range = std::string(trace.str(r.name[x]));
        break;
      }
    }

    // The captured launches (one per correlation: a runtime call and the driver call inside it)
    // and their paths below the ranges around the whole capture.
    std::vector<uint32_t> tokens;
    std::vector<std::string> paths;
    std::unordered_set<int64_t> correlations;
    const size_t first = static_cast<size_t>(
        std::lower_bound(a.start_ns.begin(), a.start_ns.end(), w.start_ns) - a.start_ns.begin());
    for (size_t i = first; i < a.size() && a.start_ns[i] <= w.end_ns && budget > 0; ++i) {
      --budget;  // the scan is work too: captures that span a hostile trace end
      if (a.pid[i] != w.pid || a.tid[i] != w.tid || launched[i] ||
          !IsKernelLaunchCall(trace.str(a.name[i]))) {
        continue;
      }
      if (a.correlation[i] >= 0 && !correlations.insert(a.correlation[i]).second) continue;
      const int32_t inner = locator.Innermost(w.pid, w.tid, a.start_ns[i]);
      std::string path = PathBelow(trace, inner, [&](int32_t x) {
        return r.start_ns[x] <= w.start_ns && r.end_ns[x] >= w.end_ns;
      });
      tokens.push_back(token(path));
      paths.push_back(std::move(path));
    }
    const size_t m = tokens.size();
    g.launches = static_cast<int64_t>(m);
    if (m == 0) continue;

    // Candidate eager runs: code ranges holding m/2 .. 2m eager launches.
    struct Candidate {
      size_t thread, lo, hi;  // the launches [lo, hi) of threads[thread]
      int32_t range;
      std::vector<int32_t> map;  // per captured launch: the launch matched in [lo, hi), or -1
      int64_t score = 0;
      int64_t batch = -1;  // the batch of the step holding the run; -1: unknown
    };
    std::vector<Candidate> candidates;
    const auto fewest =
        std::lower_bound(by_launches.begin(), by_launches.end(), (static_cast<int64_t>(m) + 1) / 2,
                         [&](int32_t x, int64_t n) { return launches_in[x] < n; });
    const auto most =
        std::upper_bound(by_launches.begin(), by_launches.end(), 2 * static_cast<int64_t>(m),
                         [&](int64_t n, int32_t x) { return n < launches_in[x]; });
    for (auto it = fewest; it != most; ++it) {
      const int32_t x = *it;
      const auto t = thread_of.find(ThreadKey(er.pid[x], er.tid[x]));
      if (t == thread_of.end()) continue;
      const EagerThread& et = threads[t->second];
      const size_t lo = static_cast<size_t>(
          std::lower_bound(et.launch_ns.begin(), et.launch_ns.end(), er.start_ns[x]) -
          et.launch_ns.begin());
      const size_t hi = static_cast<size_t>(
          std::lower_bound(et.launch_ns.begin(), et.launch_ns.end(), er.end_ns[x]) -
          et.launch_ns.begin());
      if (hi <= lo) continue;
      const int64_t cells = static_cast<int64_t>(m <= kMaxRefined ? m * (hi - lo) : m + hi - lo);
      if (budget < cells) {
        out.work_cut += most - it;
        break;
      }
      budget -= cells;
      std::vector<uint32_t> theirs(hi - lo);
      for (size_t p = lo; p < hi; ++p) {
        theirs[p - lo] = token(
            PathBelow(e, et.innermost[p], [&](int32_t y) { return y == static_cast<int32_t>(x); }));
      }
      Candidate c{t->second, lo, hi, x, {}, 0};
      if (m <= kMaxRefined) {
        c.map = LongestCommonSubsequence(tokens, theirs.data(), theirs.size());
      } else {
        c.map.assign(m, -1);
        for (size_t i = 0; i < m && i < theirs.size(); ++i) {
          if (tokens[i] == theirs[i]) c.map[i] = static_cast<int32_t>(i);
        }
      }
      c.score = std::count_if(c.map.begin(), c.map.end(), [](int32_t p) { return p >= 0; });
      if (steps && eager_reference == nullptr) {
        const StepBatches::Step* step = steps->At(er.pid[x], er.start_ns[x]);
        if (step != nullptr && step->batch > 0) c.batch = step->batch;
      }
      if (2 * c.score >= static_cast<int64_t>(m)) candidates.push_back(std::move(c));
    }
    if (candidates.empty()) continue;
    // The eager runs of the graph's own batch size, when the steps say both.
    std::set<std::tuple<size_t, size_t, size_t>> runs_seen;
    std::set<int64_t> batches_seen;
    for (const Candidate& c : candidates) {
      runs_seen.insert({c.thread, c.lo, c.hi});
      batches_seen.insert(c.batch);
    }
    g.eager_candidates = static_cast<int64_t>(runs_seen.size());
    g.candidate_batches.assign(batches_seen.begin(), batches_seen.end());
    if (steps) {
      if (eager_reference != nullptr) {
        g.selection = EagerSelection::kAllNoEagerBatch;
      } else if (g.batch <= 0) {
        g.selection = EagerSelection::kAllGraphUnknown;
      } else if (batches_seen.count(g.batch) == 0) {
        g.selection = EagerSelection::kAllNoneOfBatch;
      } else {
        g.selection = EagerSelection::kOfBatch;
        std::erase_if(candidates, [&](const Candidate& c) { return c.batch != g.batch; });
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& x, const auto& y) {
      return x.score != y.score ? x.score > y.score : er.start_ns[x.range] < er.start_ns[y.range];
    });
    const double floor = kNearBest * static_cast<double>(candidates.front().score);
    // Per captured launch: the summed eager durations matched and how many runs matched it.
    std::vector<DurationNs> sum(m, 0);
    std::vector<int64_t> count(m, 0);
    std::set<std::tuple<size_t, size_t, size_t>> taken;  // a run held by two ranges counts once
    TimeNs first_run_ns = INT64_MAX;
    for (const Candidate& c : candidates) {
      if (static_cast<double>(c.score) < floor) break;
      if (!taken.insert({c.thread, c.lo, c.hi}).second) continue;
      ++g.eager_runs;
      if (er.start_ns[c.range] < first_run_ns) {
        first_run_ns = er.start_ns[c.range];
        g.eager_range = std::string(e.str(er.name[c.range]));
      }
      const EagerThread& et = threads[c.thread];
      for (size_t i = 0; i < m; ++i) {
        if (c.map[i] < 0) continue;
        sum[i] += et.dur_ns[c.lo + static_cast<size_t>(c.map[i])];
        ++count[i];
      }
    }
    ++out.graphs_estimated;
    // Per path, in capture order.
    std::map<std::string, size_t> row_of;
    for (size_t i = 0; i < m; ++i) {
      auto [it, inserted] = row_of.try_emplace(paths[i], g.ranges.size());
      if (inserted) {
        g.ranges.push_back({paths[i], 0, 0, 0, 0});
      }
      WholeGraphEstimate::Range& row = g.ranges[it->second];
      ++row.launches;
      if (count[i] == 0) continue;
      ++row.matched;
      ++g.matched;
      const DurationNs mean = sum[i] / count[i];
      row.eager_ns += mean;
      g.eager_ns += mean;
    }
    for (WholeGraphEstimate::Range& row : g.ranges) {
      row.share = g.eager_ns > 0
                      ? static_cast<double>(row.eager_ns) / static_cast<double>(g.eager_ns)
                      : 0.0;
    }
  }
  return out;
}

}  // namespace sightline
