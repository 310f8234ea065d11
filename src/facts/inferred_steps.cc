#include "facts/inferred_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/stats.h"
#include "facts/graph_replays.h"
#include "facts/launch_projection.h"
#include "facts/trace_facts.h"

namespace sightline {
namespace {

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
  for (const InferredSteps::Step& s : r.steps) counts.push_back(s.launches);
  const double median = Median(counts);
  int64_t alike = 0;
  for (int64_t c : counts) alike += Alike(c, static_cast<int64_t>(median + 0.5)) ? 1 : 0;
  r.regular_share = counts.empty() ? 0 : static_cast<double>(alike) / counts.size();
}

int64_t LaunchesIn(const LaunchIndex& index, int32_t thread, TimeNs a, TimeNs b) {
  return thread < 0 ? 0 : static_cast<int64_t>(index.LaunchedIn(thread, a, b).size());
}

// One step per replay of the thread's most replayed graph: from its launch to the next one's.
InferredSteps FromGraphReplays(TraceFacts& facts, const LaunchingThread& main) {
  InferredSteps r;
  const Trace& trace = facts.trace();
  const GraphReplays& replays = facts.Replays();
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
  std::vector<const GraphReplay*> marks;
  for (const GraphReplay& g : replays.replays) {
    if (g.pid == main.pid && g.tid == main.tid && g.launch_call != kNoRow &&
        (g.variant == top->first || (step_kernels > 1 && per_replay(g.variant) == step_kernels))) {
      marks.push_back(&g);
    }
  }
  const LaunchIndex& index = facts.Launches();
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
InferredSteps FromSynchronizations(TraceFacts& facts, const LaunchingThread& main) {
  InferredSteps r;
  const Trace& trace = facts.trace();
  const ApiCallTable& api = trace.api_calls;
  std::vector<size_t> syncs;
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.pid[i] == main.pid && api.tid[i] == main.tid && IsBlockingCall(trace, i)) {
      syncs.push_back(i);
    }
  }
  if (syncs.size() < kMinSteps + 1) return r;
  const LaunchIndex& index = facts.Launches();
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

}  // namespace

InferredSteps InferSteps(TraceFacts& facts) {
  const LaunchingThread main = facts.MainLaunchingThread(-1);
  if (main.pid < 0 && main.tid < 0) return {};
  for (auto method : {&FromGraphReplays, &FromSynchronizations}) {
    InferredSteps r = method(facts, main);
    if (r.steps.size() < kMinSteps) continue;
    r.pid = main.pid;
    r.tid = main.tid;
    Measure(r);
    if (r.regular_share >= kMinRegularShare) return r;
  }
  return {};
}

}  // namespace sightline
