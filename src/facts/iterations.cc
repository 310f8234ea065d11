#include "facts/iterations.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "base/name_pattern.h"
#include "facts/gpu_time_facts.h"
#include "facts/host_facts.h"
#include "facts/inferred_steps.h"
#include "facts/intervals.h"

namespace sightline {

// PyTorch profiler steps; "iteration 5", "iter_12", "step 3", "Step#3", "decode_step_7" and other
// known *_step names; any other *_step name with a number ("graph_step_12", "eager_step_12": CUDA
// graph replays and the same step run eagerly); TensorRT-LLM's "[Executor] _forward_step 15: 0 ctx
// reqs, 32 gen reqs"; vLLM's "execute_context_1(888)_generation_0(0)". A keyword must be followed
// by a non-letter or the end, so "iterator" and "steps" do not match.
const char kDefaultIterationRegex[] =
    "ProfilerStep#\\d+"
    "|(\\[\\w+\\]\\s*)?_?(iteration|iter|step|decode_step|prefill_step|train_step|forward_step|"
    "generation_step|engine_step|model_step)([^a-z].*)?"
    "|([a-z]+_)+step[ _#:]*\\d+([^a-z0-9].*)?"
    "|execute_context_\\d+.*";

namespace {

// Candidate kinds: NVTX ranges and PyTorch annotations (and cpu_op, where older PyTorch versions
// put ProfilerStep#N); python_function frames never count.
bool CandidateKind(RangeKind kind) { return kind != RangeKind::kPythonFunction; }

// The outlier threshold of a set of wall times: median + max(k x 1.4826 x MAD, (r - 1) x median).
double OutlierThreshold(const std::vector<int64_t>& walls, const IterationsOptions& options,
                        double* median_out = nullptr, double* mad_out = nullptr) {
  const double median = Median(walls);
  std::vector<double> deviations;
  deviations.reserve(walls.size());
  for (int64_t w : walls) deviations.push_back(std::abs(static_cast<double>(w) - median));
  const double mad = Median(std::move(deviations));
  if (median_out != nullptr) *median_out = median;
  if (mad_out != nullptr) *mad_out = mad;
  return median +
         std::max(options.outlier_mads * 1.4826 * mad, (options.outlier_min_ratio - 1.0) * median);
}

// The warm-up prefix (IterationSet::warmup): judged against the second half of the steps.
constexpr size_t kMinStepsForWarmup = 8;
int64_t WarmupSteps(const std::vector<int64_t>& walls, const IterationsOptions& options) {
  const size_t n = walls.size();
  if (n < kMinStepsForWarmup) return 0;
  const double threshold =
      OutlierThreshold(std::vector<int64_t>(walls.begin() + n / 2, walls.end()), options);
  int64_t over = 0, warmup = 0;
  for (size_t i = 0; i < n / 2; ++i) {
    if (static_cast<double>(walls[i]) <= threshold) continue;
    ++over;
    if (2 * over >= static_cast<int64_t>(i + 1)) warmup = static_cast<int64_t>(i + 1);
  }
  return warmup;
}

void ComputeDistribution(IterationSet& set, const IterationsOptions& options) {
  std::vector<int64_t> all;
  all.reserve(set.iterations.size());
  for (const Iteration& it : set.iterations) all.push_back(it.wall_ns());
  set.warmup = WarmupSteps(all, options);
  for (int64_t i = 0; i < set.warmup; ++i) {
    set.iterations[i].warmup = true;
    set.warmup_ns += set.iterations[i].wall_ns();
  }
  std::vector<int64_t> walls(all.begin() + set.warmup, all.end());
  set.wall = ComputeDurationStats(walls);
  const double threshold = OutlierThreshold(walls, options, nullptr, &set.wall_mad_ns);
  if (walls.size() < 3) return;
  set.outlier_threshold_ns = threshold;
  for (Iteration& it : set.iterations) {
    it.outlier = !it.warmup && static_cast<double>(it.wall_ns()) > set.outlier_threshold_ns;
    set.outliers += it.outlier;
  }
}

// The devices, launched work, GPU busy time and distribution of a set whose pid, tid and
// iterations' times (and names, range rows) are set, from the devices' busy unions and the launch
// index.
void MeasureSet(const Trace& trace, GpuTimeFacts& gpu, HostFacts& host,
                const IterationsOptions& options, IterationSet& set);

}  // namespace

namespace {

Status BadRegex(const std::string& regex, const std::string& error) {
  return InvalidArgumentError(
      fmt::format("iterations regex '{}' is not a valid regular expression (RE2 syntax: no "
                  "look-around or back-references): {}",
                  regex, error));
}

}  // namespace

Status CheckIterationsRegex(const std::string& regex) {
  if (regex.empty()) return Status::Ok();
  RE2::Options re_options;
  re_options.set_log_errors(false);
  const RE2 re(regex, re_options);
  return re.ok() ? Status::Ok() : BadRegex(regex, re.error());
}

StatusOr<IterationsResult> ComputeIterations(const Trace& trace, GpuTimeFacts& gpu, HostFacts& host,
                                             GraphFacts& graphs, const IterationsOptions& options) {
  IterationsResult res;
  res.default_regex = options.name_regex.empty();
  res.regex = res.default_regex ? kDefaultIterationRegex : options.name_regex;
  // RE2: linear time and no recursion, so a range name of any length (or a user's pattern with
  // nested repeats) cannot exhaust the stack, as std::regex did on names of 25 KB.
  RE2::Options re_options;
  re_options.set_log_errors(false);
  re_options.set_case_sensitive(!res.default_regex);
  const RE2 re(res.regex, re_options);
  if (!re.ok()) return BadRegex(res.regex, re.error());

  // The regex runs once per distinct name.
  const RangeTable& r = trace.ranges;
  std::vector<int8_t> name_matches(trace.strings.size(), -1);
  auto matches = [&](int32_t row) {
    if (!CandidateKind(r.kind[row])) return false;
    int8_t& m = name_matches[r.name[row].value];
    if (m < 0) {
      const std::string_view name = trace.str(r.name[row]);
      m = RE2::FullMatch(re2::StringPiece(name.data(), name.size()), re) ? 1 : 0;
    }
    return m == 1;
  };

  // Matching ranges grouped by (pid, tid, name pattern); the pattern is empty for a given regex.
  struct Group {
    std::vector<int32_t> rows;
    DurationNs total_ns = 0;
  };
  std::map<std::tuple<int32_t, int32_t, std::string>, Group> groups;
  std::vector<int32_t> group_of(r.size(), -1);  // dense group number of a matching row
  std::map<std::tuple<int32_t, int32_t, std::string>, int32_t> group_numbers;
  for (size_t i = 0; i < r.size(); ++i) {
    const int32_t row = static_cast<int32_t>(i);
    if (!matches(row)) continue;
    ++res.matching_ranges;
    const std::string pattern =
        res.default_regex ? DigitRunsToN(trace.str(r.name[row])) : std::string();
    auto key = std::make_tuple(r.pid[row], r.tid[row], pattern);
    auto [num, inserted] =
        group_numbers.try_emplace(key, static_cast<int32_t>(group_numbers.size()));
    group_of[row] = num->second;
    // Only the outermost ranges of a group are iterations: drop one nested in a range of its own
    // group (the parent chain stays on the range's thread).
    bool nested = false;
    for (int32_t p = r.parent[row]; p != kNoRow; p = r.parent[p]) {
      if (group_of[p] == num->second) {
        nested = true;
        break;
      }
    }
    if (nested) continue;
    Group& g = groups[key];
    g.rows.push_back(row);
    g.total_ns += r.dur_ns(row);
  }
  if (groups.empty()) {
    // No range names a step: the trace's own rhythm may (graph replays, synchronizations); a
    // user's --iterations that matched nothing stays unanswered.
    if (!res.default_regex) return res;
    const InferredSteps inferred = InferSteps(trace, host, graphs);
    if (inferred.steps.empty()) return res;
    res.method = inferred.method;
    res.regular_share = inferred.regular_share;
    // One set per kernel mix: the loop (families[0]) and, beside it, the other families of at
    // least kMinOtherLoopIterations steps (a prefill per generate() call); the rest are counted.
    std::vector<IterationSet> families(inferred.families.size());
    for (size_t f = 0; f < families.size(); ++f) {
      IterationSet& set = families[f];
      set.pid = inferred.pid;
      set.tid = inferred.tid;
      const InferredSteps::Family& family = inferred.families[f];
      set.pattern =
          f == 0 ? inferred.pattern
                 : fmt::format(
                       "{} [{}]",
                       family.distinct_kernel.empty() ? std::string("fewer of the loop's kernels")
                                                      : family.distinct_kernel,
                       family.opens_runs ? "opens each run of the loop" : "another kernel mix");
    }
    for (const InferredSteps::Step& step : inferred.steps) {
      Iteration& it = families[step.family].iterations.emplace_back();
      it.name = inferred.name;
      it.start_ns = step.start_ns;
      it.end_ns = step.end_ns;
    }
    for (size_t f = 0; f < families.size(); ++f) {
      // A loop beside the main one runs steps of a size like its own; a few kernels between
      // calls (set-up, the stop check) are not one.
      const bool loop_sized =
          4 * inferred.families[f].kernels_median >= inferred.families[0].kernels_median;
      if (f > 0 && (families[f].iterations.size() < kMinOtherLoopIterations || !loop_sized)) {
        res.other_steps += static_cast<int64_t>(families[f].iterations.size());
        for (const Iteration& it : families[f].iterations) res.other_steps_ns += it.wall_ns();
        continue;
      }
      MeasureSet(trace, gpu, host, options, families[f]);
      (f == 0 ? res.sets : res.other_loops).push_back(std::move(families[f]));
    }
    return res;
  }

  // Per process, the group with the most iterations (then the longest in total).
  std::map<int32_t, const std::pair<const std::tuple<int32_t, int32_t, std::string>, Group>*> best;
  for (const auto& entry : groups) {
    const int32_t pid = std::get<0>(entry.first);
    auto [it, inserted] = best.try_emplace(pid, &entry);
    const Group& cur = it->second->second;
    const Group& cand = entry.second;
    if (!inserted && (cand.rows.size() > cur.rows.size() ||
                      (cand.rows.size() == cur.rows.size() && cand.total_ns > cur.total_ns))) {
      it->second = &entry;
    }
  }

  auto make_set = [&](const std::tuple<int32_t, int32_t, std::string>& key, const Group& group,
                      std::vector<IterationSet>& into) {
    IterationSet& set = into.emplace_back();
    set.pid = std::get<0>(key);
    set.tid = std::get<1>(key);
    set.pattern = res.default_regex ? std::get<2>(key) : res.regex;
    for (int32_t row : group.rows) {
      Iteration& it = set.iterations.emplace_back();
      it.range_row = row;
      it.name = r.name[row];
      it.start_ns = r.start_ns[row];
      it.end_ns = r.end_ns[row];
    }
    MeasureSet(trace, gpu, host, options, set);
  };
  for (const auto& [pid, entry] : best) make_set(entry->first, entry->second, res.sets);
  // The other loops: another name in a process with a set (a given regex names one loop).
  if (res.default_regex) {
    for (const auto& entry : groups) {
      auto b = best.find(std::get<0>(entry.first));
      if (b->second == &entry || std::get<2>(entry.first) == std::get<2>(b->second->first) ||
          entry.second.rows.size() < kMinOtherLoopIterations) {
        continue;
      }
      make_set(entry.first, entry.second, res.other_loops);
    }
  }
  auto most_first = [](const IterationSet& a, const IterationSet& b) {
    return a.iterations.size() > b.iterations.size();
  };
  std::stable_sort(res.sets.begin(), res.sets.end(), most_first);
  std::stable_sort(res.other_loops.begin(), res.other_loops.end(), most_first);
  return res;
}

namespace {

void MeasureSet(const Trace& trace, GpuTimeFacts& gpu, HostFacts& host,
                const IterationsOptions& options, IterationSet& set) {
  const std::vector<std::pair<int32_t, int32_t>>& pid_devices = gpu.PidDevices();
  const LaunchIndex& index = host.Launches();
  std::vector<Interval> launched;
  {
    const int32_t pid = set.pid;
    for (const auto& [p, device] : pid_devices) {
      if (p == pid && pid >= 0) set.devices.push_back(device);
    }
    if (set.devices.empty()) {  // process unknown: every device
      for (const auto& [p, device] : pid_devices) set.devices.push_back(device);
    }
    std::sort(set.devices.begin(), set.devices.end());
    set.devices.erase(std::unique(set.devices.begin(), set.devices.end()), set.devices.end());

    const int32_t thread = index.ThreadOf(set.pid, set.tid);
    for (Iteration& it : set.iterations) {
      it.index = &it - set.iterations.data();
      launched.clear();
      for (uint32_t w : index.LaunchedIn(thread, it.start_ns, it.end_ns)) {
        index.Accumulate(w, it.launched);
        if (index.IsKernel(w)) {
          launched.push_back({trace.kernels.start_ns[w], trace.kernels.end_ns[w]});
        } else {
          const uint32_t m = index.MemOpRow(w);
          launched.push_back({trace.memops.start_ns[m], trace.memops.end_ns[m]});
        }
      }
      launched = MergeIntervals(std::move(launched));
      it.gpu_busy_launched_ns = TotalLength(launched);
    }

    // GPU busy of the set's devices: one device's union from the facts, or their union.
    std::vector<Interval> several;
    const std::vector<Interval>* busy = &several;
    if (set.devices.size() == 1) {
      busy = &gpu.Busy(set.devices[0]);
    } else {
      for (int32_t d : set.devices) {
        const std::vector<Interval>& b = gpu.Busy(d);
        several.insert(several.end(), b.begin(), b.end());
      }
      several = MergeIntervals(std::move(several));
    }
    for (Iteration& it : set.iterations) {
      it.gpu_busy_in_window_ns = BusyWithin(*busy, it.start_ns, it.end_ns);
    }
    ComputeDistribution(set, options);
  }
}

}  // namespace

}  // namespace sightline
