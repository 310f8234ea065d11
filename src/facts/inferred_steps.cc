#include "facts/inferred_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "base/stats.h"
#include "facts/graph_facts.h"
#include "facts/graph_replays.h"
#include "facts/host_facts.h"
#include "facts/launch_projection.h"

namespace sightline {
namespace {

// What the step search reads besides the trace: its launches and its graph replays.
struct StepFacts {
  const Trace& trace;
  HostFacts& host;
  GraphFacts& graphs;
};

constexpr size_t kMinSteps = 3;
constexpr int kMaxPeriod = 8;              // synchronizations per step looked for
constexpr double kAlike = 0.10;            // launch counts within 10% are "alike"
constexpr double kMinRegularShare = 0.5;   // below: no loop is claimed
constexpr double kPeriodMatchShare = 0.8;  // a period that explains this share of counts wins

bool Alike(int64_t a, int64_t b) {
  return std::abs(a - b) <= std::max<int64_t>(1, static_cast<int64_t>(kAlike * std::max(a, b)));
}

void Measure(InferredSteps& r) {
  std::vector<int64_t> counts;
  for (const InferredSteps::Step& s : r.steps) {
    if (!s.cut) counts.push_back(s.launches);
  }
  const double median = Median(counts);
  int64_t alike = 0;
  for (int64_t c : counts) alike += Alike(c, static_cast<int64_t>(median + 0.5)) ? 1 : 0;
  r.regular_share = counts.empty() ? 0 : static_cast<double>(alike) / counts.size();
}

int64_t LaunchesIn(const LaunchIndex& index, int32_t thread, TimeNs a, TimeNs b) {
  return thread < 0 ? 0 : static_cast<int64_t>(index.LaunchedIn(thread, a, b).size());
}

// Each replay step runs from its launch to the next one's, so the work between two calls of a
// loop (generate()'s end, the next call's set-up and prefill) lands in the step before the next
// call: an outlier step that is no decode step. A step with clearly more launches than the median
// step (> twice as many and > the median + kTailMargin) ends at the host synchronization inside it
// that leaves it the launch count closest to the median step's, and the rest is a stretch of its
// own (Step::cut). A step without a synchronization inside it is kept whole.
constexpr int64_t kTailMargin = 16;

void CutLongTails(const StepFacts& facts, const LaunchingThread& main, InferredSteps& r) {
  std::vector<int64_t> counts;
  for (const InferredSteps::Step& s : r.steps) counts.push_back(s.launches);
  if (counts.size() < kMinSteps) return;
  const auto median = static_cast<int64_t>(Median(counts) + 0.5);
  const Trace& trace = facts.trace;
  const ApiCallTable& api = trace.api_calls;
  std::vector<TimeNs> syncs;  // ends of the thread's synchronizations, in time order
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.pid[i] == main.pid && api.tid[i] == main.tid && IsBlockingCall(trace, i)) {
      syncs.push_back(api.end_ns[i]);
    }
  }
  std::sort(syncs.begin(), syncs.end());
  const LaunchIndex& index = facts.host.Launches();
  const int32_t thread = index.ThreadOf(main.pid, main.tid);
  std::vector<InferredSteps::Step> out;
  for (InferredSteps::Step s : r.steps) {
    TimeNs cut = -1;
    int64_t head = 0;
    if (s.launches > 2 * median && s.launches > median + kTailMargin) {
      for (auto it = std::upper_bound(syncs.begin(), syncs.end(), s.start_ns);
           it != syncs.end() && *it < s.end_ns; ++it) {
        const int64_t n = LaunchesIn(index, thread, s.start_ns, *it);
        if (cut < 0 || std::abs(n - median) < std::abs(head - median)) cut = *it, head = n;
      }
    }
    if (cut < 0 || s.launches - head <= kTailMargin) {
      out.push_back(s);
      continue;
    }
    InferredSteps::Step rest = s;
    rest.start_ns = cut;
    rest.launches = s.launches - head;
    rest.cut = true;
    s.end_ns = cut;
    s.launches = head;
    out.push_back(s);
    out.push_back(rest);
  }
  r.steps = std::move(out);
}

// One step per replay of the thread's most replayed graph: from its launch to the next one's.
InferredSteps FromGraphReplays(const StepFacts& facts, const LaunchingThread& main) {
  InferredSteps r;
  const Trace& trace = facts.trace;
  const GraphReplays& replays = facts.graphs.Replays();
  std::map<int32_t, int64_t> per_variant;
  for (const GraphReplay& g : replays.replays) {
    if (g.pid == main.pid && g.tid == main.tid && g.launch_call != kNoRow) ++per_variant[g.variant];
  }
  if (per_variant.empty()) return r;
  const auto top =
      std::max_element(per_variant.begin(), per_variant.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (static_cast<size_t>(top->second) < kMinSteps + 1) return r;
  // The same step captured again (torch.compile's CUDA graph trees record a graph per cache
  // generation) has the same kernels per replay: its replays are steps too.
  auto per_replay = [&replays](int32_t variant) -> int64_t {
    return variant >= 0 && static_cast<size_t>(variant) < replays.variants.size()
               ? replays.variants[variant].kernels_per_replay
               : -1;
  };
  const int64_t step_kernels = per_replay(top->first);
  // Graphs traced as a whole (nsys's default) show no kernels: there the same step's graphs are
  // those of a GPU time per replay within 10% of the most replayed one's.
  auto gpu_per_replay = [&replays](int32_t variant) -> double {
    if (variant < 0 || static_cast<size_t>(variant) >= replays.variants.size()) return -1;
    const GraphVariant& v = replays.variants[variant];
    return v.replays > 0 ? static_cast<double>(v.gpu_ns) / static_cast<double>(v.replays) : -1;
  };
  const double step_gpu = gpu_per_replay(top->first);
  auto same_step = [&](int32_t variant) {
    if (variant == top->first) return true;
    if (step_kernels > 1) return per_replay(variant) == step_kernels;
    const double gpu = gpu_per_replay(variant);
    return per_replay(variant) == step_kernels && step_gpu > 0 && gpu > 0 &&
           std::abs(gpu - step_gpu) <= kAlike * std::max(gpu, step_gpu);
  };
  std::vector<const GraphReplay*> marks;
  for (const GraphReplay& g : replays.replays) {
    if (g.pid == main.pid && g.tid == main.tid && g.launch_call != kNoRow && same_step(g.variant)) {
      marks.push_back(&g);
    }
  }
  const LaunchIndex& index = facts.host.Launches();
  const int32_t thread = index.ThreadOf(main.pid, main.tid);
  for (size_t i = 0; i < marks.size(); ++i) {
    InferredSteps::Step s;
    s.start_ns = marks[i]->launch_ns;
    // The last step ends with its replay's GPU work (or its launch call, if later).
    s.end_ns = i + 1 < marks.size() ? marks[i + 1]->launch_ns
                                    : std::max(marks[i]->gpu_end_ns, marks[i]->launch_end_ns);
    if (s.end_ns <= s.start_ns) continue;
    s.launches = LaunchesIn(index, thread, s.start_ns, s.end_ns);
    r.steps.push_back(s);
  }
  CutLongTails(facts, main, r);
  r.method = "graph replays";
  const GraphVariant* v =
      top->first >= 0 && static_cast<size_t>(top->first) < replays.variants.size()
          ? &replays.variants[top->first]
          : nullptr;
  const std::string_view call = trace.str(trace.api_calls.name[marks.front()->launch_call]);
  r.name = trace.api_calls.name[marks.front()->launch_call];
  std::set<int32_t> variants;
  for (const GraphReplay* g : marks) variants.insert(g->variant);
  r.pattern = fmt::format("{} of {}{} (one replay per step)", call,
                          v != nullptr ? v->label : std::string("the most replayed graph"),
                          variants.size() > 1
                              ? fmt::format(" and {} other graph{} of its size",
                                            variants.size() - 1, variants.size() > 2 ? "s" : "")
                              : std::string());
  return r;
}

// Steps between the thread's synchronizations, `period` of them per step, the period being the
// smallest one that repeats the launch counts between them.
InferredSteps FromSynchronizations(const StepFacts& facts, const LaunchingThread& main) {
  InferredSteps r;
  const Trace& trace = facts.trace;
  const ApiCallTable& api = trace.api_calls;
  std::vector<size_t> syncs;
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.pid[i] == main.pid && api.tid[i] == main.tid && IsBlockingCall(trace, i)) {
      syncs.push_back(i);
    }
  }
  if (syncs.size() < kMinSteps + 1) return r;
  const LaunchIndex& index = facts.host.Launches();
  const int32_t thread = index.ThreadOf(main.pid, main.tid);
  // Launches between consecutive synchronizations (from one's end to the next one's end).
  std::vector<int64_t> counts;
  for (size_t k = 0; k + 1 < syncs.size(); ++k) {
    counts.push_back(LaunchesIn(index, thread, api.end_ns[syncs[k]], api.end_ns[syncs[k + 1]]));
  }
  int period = 0;
  double best = 0;
  for (int p = 1; p <= kMaxPeriod && static_cast<size_t>(p) * kMinSteps < counts.size(); ++p) {
    int64_t matches = 0, pairs = 0;
    for (size_t i = 0; i + p < counts.size(); ++i, ++pairs)
      matches += Alike(counts[i], counts[i + p]);
    const double share = pairs > 0 ? static_cast<double>(matches) / pairs : 0;
    if (share > best + 0.05) {  // a longer period must explain clearly more
      best = share;
      period = p;
    }
    if (share >= kPeriodMatchShare) break;
  }
  if (period == 0) return r;
  for (size_t k = 0; k + period < syncs.size(); k += period) {
    InferredSteps::Step s;
    s.start_ns = api.end_ns[syncs[k]];
    s.end_ns = api.end_ns[syncs[k + period]];
    if (s.end_ns <= s.start_ns) continue;
    s.launches = LaunchesIn(index, thread, s.start_ns, s.end_ns);
    if (s.launches == 0) continue;  // the host waiting between loops, not a step
    r.steps.push_back(s);
  }
  r.method = "synchronize cadence";
  r.period = period;
  r.name = api.name[syncs.front()];
  r.pattern = period == 1 ? fmt::format("{} (one per step)", trace.str(r.name))
                          : fmt::format("every {} host synchronizations ({} first)", period,
                                        trace.str(r.name));
  return r;
}

// The kernels a step launched, by short name, sorted (a multiset).
std::vector<uint32_t> KernelMix(const Trace& trace, const LaunchIndex& index, int32_t thread,
                                const InferredSteps::Step& s) {
  std::vector<uint32_t> mix;
  if (thread < 0) return mix;
  for (uint32_t w : index.LaunchedIn(thread, s.start_ns, s.end_ns)) {
    if (index.IsKernel(w)) mix.push_back(trace.kernels.short_name[w].value);
  }
  std::sort(mix.begin(), mix.end());
  return mix;
}

// The share of the larger mix's kernels that the other holds too (1 for two empty mixes).
double SameMixShare(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(std::max(a.size(), b.size()));
}

constexpr size_t kMaxFamilies = 32;  // more mixes than this join their closest family

// Groups the steps by kernel mix (InferredSteps::Family), the family of the most steps first.
// Without `by_mix` (graph replays), the replay steps are one family, the loop, whatever their
// mix (each replay of the step's graph is a step by construction), and the stretches cut from
// them are grouped by mix among themselves.
void AssignFamilies(const StepFacts& facts, InferredSteps& r, bool by_mix) {
  const Trace& trace = facts.trace;
  const LaunchIndex& index = facts.host.Launches();
  const int32_t thread = index.ThreadOf(r.pid, r.tid);
  std::vector<std::vector<uint32_t>> mixes, firsts;  // each step's; each family's first step's
  std::vector<int64_t> sizes;
  if (!by_mix) firsts.emplace_back(), sizes.push_back(0);  // family 0: the replay steps
  for (InferredSteps::Step& s : r.steps) {
    mixes.push_back(KernelMix(trace, index, thread, s));
    if (!by_mix && !s.cut) {
      s.family = 0;
      if (sizes[0]++ == 0) firsts[0] = mixes.back();
      continue;
    }
    int32_t best = -1;
    double best_share = -1;
    for (size_t f = by_mix ? 0 : 1; f < firsts.size(); ++f) {
      const double share = SameMixShare(mixes.back(), firsts[f]);
      if (share > best_share) best_share = share, best = static_cast<int32_t>(f);
    }
    if (best < 0 || (best_share < kSameMix && firsts.size() < kMaxFamilies)) {
      best = static_cast<int32_t>(firsts.size());
      firsts.push_back(mixes.back());
      sizes.push_back(0);
    }
    s.family = best;
    ++sizes[best];
  }
  // Most steps first (the replay steps first of all); of equal ones, the earlier.
  std::vector<int32_t> order(sizes.size()), rank(sizes.size());
  for (size_t f = 0; f < order.size(); ++f) order[f] = static_cast<int32_t>(f);
  auto key = [&](int32_t f) {
    return !by_mix && f == 0 ? std::numeric_limits<int64_t>::max() : sizes[f];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&key](int32_t a, int32_t b) { return key(a) > key(b); });
  for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = static_cast<int32_t>(k);
  for (InferredSteps::Step& s : r.steps) s.family = rank[s.family];
  r.families.assign(sizes.size(), {});
  std::vector<std::vector<int64_t>> kernels(sizes.size());
  std::vector<std::map<uint32_t, int64_t>> own(sizes.size());
  const std::vector<uint32_t>& loop = firsts.empty() ? mixes.front() : firsts[order[0]];
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const int32_t f = r.steps[i].family;
    ++r.families[f].steps;
    kernels[f].push_back(static_cast<int64_t>(mixes[i].size()));
    if (f == 0) continue;
    for (uint32_t name : mixes[i]) {
      if (!std::binary_search(loop.begin(), loop.end(), name)) ++own[f][name];
    }
  }
  for (size_t f = 0; f < r.families.size(); ++f) {
    InferredSteps::Family& family = r.families[f];
    family.kernels_median = static_cast<int64_t>(Median(kernels[f]) + 0.5);
    const auto top =
        std::max_element(own[f].begin(), own[f].end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != own[f].end()) family.distinct_kernel = std::string(trace.str(StringId{top->first}));
    // Opens runs: each of its steps is followed by a loop step and not preceded by one.
    bool opens = f > 0;
    for (size_t i = 0; opens && i < r.steps.size(); ++i) {
      if (r.steps[i].family != static_cast<int32_t>(f)) continue;
      // A stretch cut from a replay step follows that step by construction: it opens the run
      // after it.
      opens = i + 1 < r.steps.size() && r.steps[i + 1].family == 0 &&
              (i == 0 || r.steps[i - 1].family != 0 || r.steps[i].cut);
    }
    family.opens_runs = opens;
  }
}

}  // namespace

InferredSteps InferSteps(const Trace& trace, HostFacts& host, GraphFacts& graphs) {
  const StepFacts facts{trace, host, graphs};
  const LaunchingThread main = host.MainLaunchingThread(-1);
  if (main.pid < 0 && main.tid < 0) return {};
  for (auto method : {&FromGraphReplays, &FromSynchronizations}) {
    InferredSteps r = method(facts, main);
    if (r.steps.size() < kMinSteps) continue;
    r.pid = main.pid;
    r.tid = main.tid;
    Measure(r);
    if (r.regular_share < kMinRegularShare) continue;
    AssignFamilies(facts, r, /*by_mix=*/r.method == "synchronize cadence");
    return r;
  }
  return {};
}

}  // namespace sightline
