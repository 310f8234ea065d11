#include "analyses/phases/first_launches.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/stats.h"

namespace sightline {

FirstLaunchLoads FindFirstLaunchLoads(const Trace& trace, TimeNs first_step_ns,
                                      TimeNs first_steady_ns) {
  FirstLaunchLoads r;
  const KernelTable& k = trace.kernels;
  const ApiCallTable& api = trace.api_calls;
  // Each (process, kernel name)'s earliest launch call; graph launches aside (a graph's first
  // launch uploads the graph, whatever its kernels' modules). Whether a call is a graph launch is
  // decided once per call name, not once per kernel.
  std::unordered_map<uint64_t, int32_t> first;                 // (pid << 32 | kernel name) -> call
  std::vector<int8_t> graph_launch(trace.strings.size(), -1);  // by call name id
  std::vector<DurationNs> durations;
  durations.reserve(k.size());  // no regrowth: fresh memory is costly to fault in
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t call = k.launch_call[i];
    if (call == kNoRow || call < 0 || static_cast<size_t>(call) >= api.size()) continue;
    const uint32_t name = api.name[call].value;
    int8_t& is_graph = graph_launch[name];
    if (is_graph < 0) {
      is_graph = trace.str(api.name[call]).find("GraphLaunch") != std::string_view::npos;
    }
    if (is_graph) continue;
    durations.push_back(api.end_ns[call] - api.start_ns[call]);
    const uint64_t key = (uint64_t{static_cast<uint32_t>(api.pid[call])} << 32) | k.name[i].value;
    auto [it, inserted] = first.try_emplace(key, call);
    if (!inserted && api.start_ns[call] < api.start_ns[it->second]) it->second = call;
  }
  if (durations.empty()) return r;
  r.median_launch_ns = static_cast<DurationNs>(Median(std::move(durations)));
  const DurationNs bar = std::max(kLoadingLaunchNs, kLoadingLaunchFactor * r.median_launch_ns);
  std::vector<int32_t> calls;
  for (const auto& [key, call] : first) calls.push_back(call);
  std::sort(calls.begin(), calls.end());
  calls.erase(std::unique(calls.begin(), calls.end()), calls.end());  // one call, several kernels
  r.first_launches = static_cast<int64_t>(first.size());
  for (int32_t call : calls) {
    const DurationNs d = api.end_ns[call] - api.start_ns[call];
    if (d <= bar) continue;
    ++r.loading;
    r.loading_ns += d;
    const TimeNs t = api.start_ns[call];
    if (t < first_step_ns) {
      ++r.startup, r.startup_ns += d;
    } else if (t < first_steady_ns) {
      ++r.warmup, r.warmup_ns += d;
    } else {
      ++r.steady, r.steady_ns += d;
    }
  }
  return r;
}

}  // namespace sightline
