#include "diff/step_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "base/name_pattern.h"
#include "facts/graph_kernel_paths.h"
#include "facts/iterations.h"
#include "facts/kernel_category.h"
#include "facts/launch_projection.h"
#include "model/thread_key.h"

namespace sightline {

const char* StepPart::KindName(Kind kind) { return kind == Kind::kGpu ? "gpu" : "idle"; }

std::string StepPart::Key() const {
  return fmt::format("{}\x1f{}\x1f{}", KindName(kind), range, what);
}

std::string StepPart::Label() const {
  if (kind == Kind::kIdle) {
    return what == "host" ? "GPU idle, host code (no CUDA call)"
                          : fmt::format("GPU idle, host in {}", what);
  }
  return fmt::format("`{}` {}", range, what);
}

size_t RunSamples::PartIndex(const StepPart& part) {
  const std::string key = part.Key();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].Key() == key) return i;
  }
  parts.push_back(part);
  part_ns.emplace_back(wall_ns.size(), 0.0);
  return parts.size() - 1;
}

Status RunSamples::Validate(const std::string& where) const {
  if (parts.size() != part_ns.size()) {
    return InvalidInputError(
        fmt::format("{}: {} parts but {} value lists", where, parts.size(), part_ns.size()));
  }
  if (launched_ns.size() != wall_ns.size()) {
    return InvalidInputError(fmt::format("{}: {} GPU-time-launched values for {} iterations", where,
                                         launched_ns.size(), wall_ns.size()));
  }
  for (size_t i = 0; i < wall_ns.size(); ++i) {
    if (!std::isfinite(launched_ns[i]) || launched_ns[i] < 0) {
      return InvalidInputError(
          fmt::format("{}: iteration {}: GPU time launched {} is not a finite duration", where, i,
                      launched_ns[i]));
    }
    if (!std::isfinite(wall_ns[i]) || wall_ns[i] < 0) {
      return InvalidInputError(fmt::format(
          "{}: iteration {}: wall time {} is not a finite duration", where, i, wall_ns[i]));
    }
  }
  std::vector<double> sum(wall_ns.size(), 0.0);
  for (size_t p = 0; p < parts.size(); ++p) {
    if (part_ns[p].size() != wall_ns.size()) {
      return InvalidInputError(fmt::format("{}: part '{}' has {} values for {} iterations", where,
                                           parts[p].Label(), part_ns[p].size(), wall_ns.size()));
    }
    for (size_t i = 0; i < wall_ns.size(); ++i) {
      const double v = part_ns[p][i];
      if (!std::isfinite(v) || v < 0) {
        return InvalidInputError(
            fmt::format("{}: part '{}', iteration {}: {} is not a finite "
                        "duration",
                        where, parts[p].Label(), i, v));
      }
      sum[i] += v;
    }
  }
  for (size_t i = 0; i < wall_ns.size(); ++i) {
    // Parts are written rounded to 0.001 ns; a few ns of slack covers any number of parts.
    if (!parts.empty() && std::abs(sum[i] - wall_ns[i]) > 1.0 + 1e-9 * wall_ns[i]) {
      return InvalidInputError(
          fmt::format("{}: iteration {}: the parts add up to {:.0f} ns, not to the wall time "
                      "{:.0f} ns",
                      where, i, sum[i], wall_ns[i]));
    }
  }
  return Status::Ok();
}

namespace {

// Replayed graph kernels launched in an iteration count in the range that says what they are,
// not in the graph launch's (issue 29): the outermost range of their path (graph_kernel_paths.h)
// below the capture's own, where the capture's own is a range around every capture point of its
// thread, as the iteration's range is around an eager step's launches; for a kernel aligned with
// an eager counterpart the path is already below the eager step's range.
template <typename Intern>
void LabelGraphKernels(const Trace& trace, Intern& intern, int32_t outside,
                       std::vector<int32_t>& range_of) {
  const KernelTable& k = trace.kernels;
  const GraphKernelPaths paths = ComputeGraphKernelPaths(trace);
  if (paths.source.empty()) return;  // no graph kernel (whole-graph rows are runs, not kernels)
  std::unordered_map<int64_t, std::pair<TimeNs, TimeNs>> captures;  // thread -> first, last
  for (size_t i = 0; i < k.size(); ++i) {
    if (paths.source[i] != PathSource::kCapture) continue;
    auto [it, inserted] = captures.try_emplace(ThreadKey(k.capture_pid[i], k.capture_tid[i]),
                                               k.capture_ns[i], k.capture_ns[i]);
    it->second.first = std::min(it->second.first, k.capture_ns[i]);
    it->second.second = std::max(it->second.second, k.capture_ns[i]);
  }
  const RangeTable& r = trace.ranges;
  std::unordered_map<int64_t, StringId> wrapper;  // thread -> name of the range around all
  for (int32_t row : paths.capture_roots) {
    auto c = captures.find(ThreadKey(r.pid[row], r.tid[row]));
    if (c != captures.end() && r.start_ns[row] <= c->second.first &&
        r.end_ns[row] > c->second.second) {
      wrapper.try_emplace(c->first, r.name[row]);
    }
  }
  for (size_t i = 0; i < k.size(); ++i) {
    if (paths.source[i] == PathSource::kNone || range_of[i] == outside) continue;
    const std::vector<std::string_view>& names = paths.components[paths.path[i]];
    size_t skip = 0;
    if (paths.source[i] == PathSource::kCapture && !names.empty()) {
      auto w = wrapper.find(ThreadKey(k.capture_pid[i], k.capture_tid[i]));
      if (w != wrapper.end() && names[0] == trace.str(w->second)) skip = 1;
    }
    if (names.size() <= skip) continue;
    range_of[i] = intern(DigitRunsToN(names[skip]));
  }
}

// One GPU work item on the iteration set's devices.
struct Work {
  TimeNs start_ns, end_ns;
  uint32_t id;  // LaunchIndex numbering
};

// The host's CUDA calls of one process flattened into disjoint stretches, each with the cause of
// highest precedence (index into kIdleCauses) among the calls covering it.
struct HostCalls {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<uint8_t> cause;
};

constexpr uint8_t kSyncCause = 0, kGcCause = 1, kGilCause = 2, kOsWaitCause = 3, kHostCause = 7;
static_assert(std::size(kIdleCauses) == kHostCause + 1);

uint8_t CauseOf(ApiClass c) {
  switch (c) {
    case ApiClass::kSync:
      return kSyncCause;
    case ApiClass::kMemcpy:
    case ApiClass::kMemset:
      return 4;
    case ApiClass::kLaunch:
      return 5;
    default:
      return 6;
  }
}

HostCalls FlattenHostCalls(AnalysisContext& context, int32_t pid) {
  const ApiCallTable& api = context.trace().api_calls;
  struct Edge {
    TimeNs t;
    int8_t delta;
    uint8_t cause;
  };
  std::vector<Edge> edges;
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.pid[i] != pid || api.end_ns[i] <= api.start_ns[i]) continue;
    const uint8_t c = CauseOf(api.api_class[i]);
    edges.push_back({api.start_ns[i], 1, c});
    edges.push_back({api.end_ns[i], -1, c});
  }
  auto add = [&](const std::vector<Interval>& intervals, uint8_t cause) {
    for (const Interval& v : intervals) {
      if (v.end_ns <= v.start_ns) continue;
      edges.push_back({v.start_ns, 1, cause});
      edges.push_back({v.end_ns, -1, cause});
    }
  };
  add(context.host().GcIntervals(pid), kGcCause);
  // The main launching thread's own waits: for the GIL, and in waiting OS calls.
  const LaunchingThread main = context.host().MainLaunchingThread(pid);
  if (main.tid >= 0) {
    if (context.host().HasGil()) add(context.host().GilWaited(main.pid, main.tid), kGilCause);
    if (context.host().HasOsCalls())
      add(context.host().Waits(main.pid, main.tid).os_wait, kOsWaitCause);
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  HostCalls out;
  int open[kHostCause] = {};
  TimeNs prev = 0;
  for (size_t i = 0; i < edges.size();) {
    const TimeNs t = edges[i].t;
    int top = kHostCause;
    for (int c = 0; c < kHostCause; ++c) {
      if (open[c] > 0) {
        top = c;
        break;
      }
    }
    if (top != kHostCause && t > prev) {
      if (!out.cause.empty() && out.cause.back() == top && out.end_ns.back() == prev) {
        out.end_ns.back() = t;
      } else {
        out.start_ns.push_back(prev);
        out.end_ns.push_back(t);
        out.cause.push_back(static_cast<uint8_t>(top));
      }
    }
    for (; i < edges.size() && edges[i].t == t; ++i) open[edges[i].cause] += edges[i].delta;
    prev = t;
  }
  return out;
}

// Adds the stretch [a, b) of GPU idle to `idle` (per cause) by the host calls covering it.
void SplitIdle(const HostCalls& calls, TimeNs a, TimeNs b, double* idle) {
  if (b <= a) return;
  DurationNs covered = 0;
  // The first stretch that ends after a.
  size_t i = static_cast<size_t>(std::upper_bound(calls.end_ns.begin(), calls.end_ns.end(), a) -
                                 calls.end_ns.begin());
  for (; i < calls.start_ns.size() && calls.start_ns[i] < b; ++i) {
    const TimeNs s = std::max(a, calls.start_ns[i]), e = std::min(b, calls.end_ns[i]);
    if (e <= s) continue;
    idle[calls.cause[i]] += static_cast<double>(e - s);
    covered += e - s;
  }
  idle[kHostCause] += static_cast<double>((b - a) - covered);
}

std::string MemOpName(MemOpKind kind) {
  return kind == MemOpKind::kMemset ? "memset" : fmt::format("memcpy {}", MemOpKindName(kind));
}

// The per-iteration figures of one set (or loop) of `context`'s trace.
RunSamples SetSamples(AnalysisContext& context, const IterationSet& set) {
  const Trace& trace = context.trace();
  RunSamples run;
  run.source = trace.source.path;
  run.pattern = set.pattern;
  const LaunchIndex& index = context.host().Launches();
  const size_t num_kernels = trace.kernels.size();
  const size_t num_work = num_kernels + trace.memops.size();

  // What each work item is: its category, and the range below an iteration that launched it.
  std::vector<std::string> names;  // interned labels: ranges and categories
  std::unordered_map<std::string, int32_t> name_ids;
  auto intern = [&](const std::string& s) {
    auto [it, inserted] = name_ids.try_emplace(s, static_cast<int32_t>(names.size()));
    if (inserted) names.push_back(s);
    return it->second;
  };
  const int32_t outside = intern(kOutsideRange);
  const int32_t step = intern(kStepRange);
  std::vector<int32_t> range_of(num_work, outside);
  std::vector<int32_t> category_of(num_work, -1);
  std::unordered_map<uint32_t, int32_t> category_by_name;
  for (size_t k = 0; k < num_kernels; ++k) {
    auto [it, inserted] = category_by_name.try_emplace(trace.kernels.name[k].value, 0);
    if (inserted)
      it->second = intern(KernelCategoryName(context.kernels().Category(trace.kernels.name[k])));
    category_of[k] = it->second;
  }
  for (size_t m = 0; m < trace.memops.size(); ++m) {
    category_of[num_kernels + m] = intern(MemOpName(trace.memops.kind[m]));
  }

  // The ranges directly below each iteration's range, by start.
  const RangeTable& ranges = trace.ranges;
  std::unordered_map<int32_t, std::vector<int32_t>> children;
  for (const Iteration& it : set.iterations) {
    if (it.range_row != kNoRow) children.try_emplace(it.range_row);
  }
  for (size_t r = 0; r < ranges.size(); ++r) {
    auto c = children.find(ranges.parent[r]);
    if (c != children.end()) c->second.push_back(static_cast<int32_t>(r));
  }
  for (auto& [parent, rows] : children) {
    std::sort(rows.begin(), rows.end(),
              [&](int32_t a, int32_t b) { return ranges.start_ns[a] < ranges.start_ns[b]; });
  }
  const int32_t thread = index.ThreadOf(set.pid, set.tid);
  if (thread >= 0) {
    const std::span<const uint32_t> all = index.ThreadWork(thread);
    const std::span<const TimeNs> times = index.ThreadTimes(thread);
    for (const Iteration& it : set.iterations) {
      const std::span<const uint32_t> launched = index.LaunchedIn(thread, it.start_ns, it.end_ns);
      const size_t first = static_cast<size_t>(launched.data() - all.data());
      const std::vector<int32_t>* kids = nullptr;
      if (auto c = children.find(it.range_row); c != children.end()) kids = &c->second;
      for (size_t j = 0; j < launched.size(); ++j) {
        const TimeNs t = times[first + j];
        int32_t label = step;
        if (kids != nullptr) {
          // The last child starting at or before t, if t is inside it.
          auto pos = std::upper_bound(kids->begin(), kids->end(), t, [&](TimeNs v, int32_t row) {
            return v < ranges.start_ns[row];
          });
          if (pos != kids->begin() && t < ranges.end_ns[*(pos - 1)]) {
            label = intern(DigitRunsToN(trace.str(ranges.name[*(pos - 1)])));
          }
        }
        range_of[launched[j]] = label;
      }
    }
  }

  LabelGraphKernels(trace, intern, outside, range_of);

  // GPU work on the set's devices, by start.
  std::vector<int32_t> devices = set.devices;
  std::sort(devices.begin(), devices.end());
  auto on_devices = [&](int32_t d) {
    return devices.empty() || std::binary_search(devices.begin(), devices.end(), d);
  };
  std::vector<Work> work;
  for (size_t k = 0; k < num_kernels; ++k) {
    if (!on_devices(trace.kernels.device[k]) || trace.kernels.dur_ns(k) <= 0) continue;
    work.push_back({trace.kernels.start_ns[k], trace.kernels.end_ns[k], static_cast<uint32_t>(k)});
  }
  for (size_t m = 0; m < trace.memops.size(); ++m) {
    if (!on_devices(trace.memops.device[m]) || trace.memops.dur_ns(m) <= 0) continue;
    work.push_back(
        {trace.memops.start_ns[m], trace.memops.end_ns[m], static_cast<uint32_t>(num_kernels + m)});
  }
  // The longest items (a collective waiting for a slow rank, a long copy) are checked against
  // every iteration; the others are found by start, from the window's start minus their longest
  // duration, so that one long item does not make every window scan the whole trace.
  constexpr size_t kLongItems = 64;
  std::vector<Work> long_work;
  DurationNs longest = 0;
  if (work.size() > kLongItems) {
    std::vector<DurationNs> durations;
    durations.reserve(work.size());
    for (const Work& w : work) durations.push_back(w.end_ns - w.start_ns);
    auto nth = durations.end() - kLongItems;
    std::nth_element(durations.begin(), nth, durations.end());
    const DurationNs cut = *nth;
    std::erase_if(work, [&](const Work& w) {
      if (w.end_ns - w.start_ns <= cut) return false;
      long_work.push_back(w);
      return true;
    });
  }
  for (const Work& w : work) longest = std::max(longest, w.end_ns - w.start_ns);
  auto by_start = [](const Work& a, const Work& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
  };
  std::sort(work.begin(), work.end(), by_start);
  std::sort(long_work.begin(), long_work.end(), by_start);
  const HostCalls calls = FlattenHostCalls(context, set.pid);

  // Part index per (range, category) of GPU work, and per idle cause.
  std::unordered_map<uint64_t, size_t> gpu_part;
  size_t idle_part[kHostCause + 1];
  for (int c = 0; c <= kHostCause; ++c) {
    idle_part[c] = run.PartIndex({StepPart::Kind::kIdle, "", kIdleCauses[c]});
  }
  struct Edge {
    TimeNs t;
    int32_t delta;
    size_t part;
  };
  std::vector<Edge> edges;
  std::vector<std::pair<size_t, int32_t>> running;  // part, items running
  for (const Iteration& it : set.iterations) {
    const size_t i = run.wall_ns.size();
    run.wall_ns.push_back(static_cast<double>(it.wall_ns()));
    run.launched_ns.push_back(static_cast<double>(it.launched.gpu_time_ns()));
    for (std::vector<double>& v : run.part_ns) v.push_back(0.0);
    edges.clear();
    auto from = std::lower_bound(work.begin(), work.end(), it.start_ns - longest,
                                 [](const Work& w, TimeNs t) { return w.start_ns < t; });
    auto add = [&](const Work* w) {
      const TimeNs s = std::max(w->start_ns, it.start_ns), e = std::min(w->end_ns, it.end_ns);
      if (e <= s) return;
      const uint64_t key = (static_cast<uint64_t>(range_of[w->id]) << 32) |
                           static_cast<uint32_t>(category_of[w->id]);
      auto [p, inserted] = gpu_part.try_emplace(key, 0);
      if (inserted) {
        p->second = run.PartIndex(
            {StepPart::Kind::kGpu, names[range_of[w->id]], names[category_of[w->id]]});
      }
      edges.push_back({s, 1, p->second});
      edges.push_back({e, -1, p->second});
    };
    for (auto w = from; w != work.end() && w->start_ns < it.end_ns; ++w) add(&*w);
    for (const Work& w : long_work) add(&w);
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    double idle[kHostCause + 1] = {};
    running.clear();
    int32_t active = 0;
    TimeNs prev = it.start_ns;
    auto advance = [&](TimeNs t) {
      if (t <= prev) return;
      if (active == 0) {
        SplitIdle(calls, prev, t, idle);
      } else {
        // Each running item gets an equal share of the instant.
        const double dt = static_cast<double>(t - prev) / active;
        for (const auto& [part, n] : running) run.part_ns[part][i] += dt * n;
      }
      prev = t;
    };
    for (size_t e = 0; e < edges.size();) {
      advance(edges[e].t);
      for (const TimeNs t = edges[e].t; e < edges.size() && edges[e].t == t; ++e) {
        active += edges[e].delta;
        auto r = std::find_if(running.begin(), running.end(),
                              [&](const auto& x) { return x.first == edges[e].part; });
        if (r == running.end()) {
          running.push_back({edges[e].part, edges[e].delta});
        } else {
          r->second += edges[e].delta;
        }
      }
      std::erase_if(running, [](const auto& x) { return x.second == 0; });
    }
    advance(it.end_ns);
    for (int c = 0; c <= kHostCause; ++c) run.part_ns[idle_part[c]][i] += idle[c];
  }
  // Idle causes that never happened are left out.
  for (size_t p = run.parts.size(); p-- > 0;) {
    const std::vector<double>& v = run.part_ns[p];
    if (std::all_of(v.begin(), v.end(), [](double x) { return x == 0; })) {
      run.parts.erase(run.parts.begin() + static_cast<std::ptrdiff_t>(p));
      run.part_ns.erase(run.part_ns.begin() + static_cast<std::ptrdiff_t>(p));
    }
  }
  return run;
}

}  // namespace

StatusOr<RunSamples> CollectRunSamples(AnalysisContext& context) {
  ASSIGN_OR_RETURN(const IterationsResult* iterations, context.loop().Iterations());
  if (iterations->sets.empty() || iterations->sets[0].iterations.empty()) {
    RunSamples run;
    run.source = context.trace().source.path;
    return run;
  }
  return SetSamples(context, iterations->sets[0]);
}

StatusOr<std::vector<RunSamples>> CollectLoopSamples(AnalysisContext& context) {
  std::vector<RunSamples> loops;
  ASSIGN_OR_RETURN(RunSamples main, CollectRunSamples(context));
  loops.push_back(std::move(main));
  ASSIGN_OR_RETURN(const IterationsResult* iterations, context.loop().Iterations());
  if (iterations->sets.empty()) return loops;
  for (const IterationSet& loop : iterations->other_loops) {
    if (loop.pid == iterations->sets[0].pid) loops.push_back(SetSamples(context, loop));
  }
  return loops;
}

}  // namespace sightline
