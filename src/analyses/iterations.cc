#include "analyses/iterations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include "analyses/interval_stream.h"
#include "analyses/intervals.h"

namespace sightline {

// PyTorch profiler steps; "iteration 5", "iter_12", "step 3", "Step#3", "decode_step_7" and other
// *_step names; TensorRT-LLM's "[Executor] _forward_step 15: 0 ctx reqs, 32 gen reqs"; vLLM's
// "execute_context_1(888)_generation_0(0)". A keyword must be followed by a non-letter or the end,
// so "iterator" and "steps" do not match.
const char kDefaultIterationRegex[] =
    "ProfilerStep#\\d+"
    "|(\\[\\w+\\]\\s*)?_?(iteration|iter|step|decode_step|prefill_step|train_step|forward_step|"
    "generation_step|engine_step|model_step)([^a-z].*)?"
    "|execute_context_\\d+.*";

namespace {

// "ProfilerStep#12" -> "ProfilerStep#N": names of one loop differ only in their numbers.
std::string NamePattern(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      out.push_back('N');
      while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    } else {
      out.push_back(name[i++]);
    }
  }
  return out;
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Candidate kinds: NVTX ranges and PyTorch annotations (and cpu_op, where older PyTorch versions
// put ProfilerStep#N); python_function frames never count.
bool CandidateKind(RangeKind kind) { return kind != RangeKind::kPythonFunction; }

void ComputeDistribution(IterationSet& set, const IterationsOptions& options) {
  std::vector<int64_t> walls;
  walls.reserve(set.iterations.size());
  for (const Iteration& it : set.iterations) walls.push_back(it.wall_ns());
  set.wall = ComputeDurationStats(walls);
  std::vector<double> deviations;
  deviations.reserve(walls.size());
  for (int64_t w : walls) deviations.push_back(std::abs(static_cast<double>(w) - set.wall.median));
  set.wall_mad_ns = MedianOf(std::move(deviations));
  if (set.iterations.size() < 3) return;
  set.outlier_threshold_ns =
      set.wall.median + std::max(options.outlier_mads * 1.4826 * set.wall_mad_ns,
                                 (options.outlier_min_ratio - 1.0) * set.wall.median);
  for (Iteration& it : set.iterations) {
    it.outlier = static_cast<double>(it.wall_ns()) > set.outlier_threshold_ns;
    set.outliers += it.outlier;
  }
}

}  // namespace

StatusOr<IterationsResult> ComputeIterations(const Trace& trace, const IterationsOptions& options) {
  IterationsResult res;
  res.default_regex = options.name_regex.empty();
  res.regex = res.default_regex ? kDefaultIterationRegex : options.name_regex;
  std::regex re;
  try {
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    if (res.default_regex) flags |= std::regex::icase;
    re = std::regex(res.regex, flags);
  } catch (const std::regex_error& e) {
    return InvalidArgumentError(
        fmt::format("iterations regex '{}' is not a valid ECMAScript regular expression: {}",
                    res.regex, e.what()));
  }

  // The regex runs once per distinct name.
  const RangeTable& r = trace.ranges;
  std::vector<int8_t> name_matches(trace.strings.size(), -1);
  auto matches = [&](int32_t row) {
    if (!CandidateKind(r.kind[row])) return false;
    int8_t& m = name_matches[r.name[row].value];
    if (m < 0) {
      const std::string_view name = trace.str(r.name[row]);
      m = std::regex_match(name.begin(), name.end(), re) ? 1 : 0;
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
        res.default_regex ? NamePattern(trace.str(r.name[row])) : std::string();
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
  if (groups.empty()) return res;

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

  // (pid, device) pairs of the GPU work: the devices each process drives.
  std::vector<std::pair<int32_t, int32_t>> pid_devices;
  std::pair<int32_t, int32_t> last{INT32_MIN, INT32_MIN};
  auto note = [&](int32_t pid, int32_t device) {
    const std::pair<int32_t, int32_t> p{pid, device};
    if (p == last) return;
    last = p;
    if (std::find(pid_devices.begin(), pid_devices.end(), p) == pid_devices.end()) {
      pid_devices.push_back(p);
    }
  };
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    note(trace.kernels.pid[i], trace.kernels.device[i]);
  }
  for (size_t i = 0; i < trace.memops.size(); ++i) {
    note(trace.memops.pid[i], trace.memops.device[i]);
  }

  const LaunchIndex index(trace);
  std::vector<Interval> launched;
  for (const auto& [pid, entry] : best) {
    const auto& [key, group] = *entry;
    IterationSet& set = res.sets.emplace_back();
    set.pid = pid;
    set.tid = std::get<1>(key);
    set.pattern = res.default_regex ? std::get<2>(key) : res.regex;
    for (const auto& [p, device] : pid_devices) {
      if (p == pid && pid >= 0) set.devices.push_back(device);
    }
    if (set.devices.empty()) {  // process unknown: every device
      for (const auto& [p, device] : pid_devices) set.devices.push_back(device);
    }
    std::sort(set.devices.begin(), set.devices.end());
    set.devices.erase(std::unique(set.devices.begin(), set.devices.end()), set.devices.end());

    const int32_t thread = index.ThreadOf(set.pid, set.tid);
    bool in_order = true;  // windows ascending and disjoint: one streaming pass measures them
    for (int32_t row : group.rows) {
      Iteration& it = set.iterations.emplace_back();
      it.index = static_cast<int64_t>(set.iterations.size() - 1);
      it.range_row = row;
      it.name = r.name[row];
      it.start_ns = r.start_ns[row];
      it.end_ns = r.end_ns[row];
      if (it.index > 0 && it.start_ns < set.iterations[it.index - 1].end_ns) in_order = false;
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

    const std::vector<int32_t>* devices = &set.devices;
    auto on_devices = [devices](int32_t d) {
      return std::binary_search(devices->begin(), devices->end(), d);
    };
    if (in_order) {
      StreamingCoverage busy(GpuWorkSource(trace, on_devices));
      for (Iteration& it : set.iterations) {
        it.gpu_busy_in_window_ns = busy.Covered(it.start_ns, it.end_ns);
      }
    } else {
      std::vector<Interval> merged;
      StreamingUnion busy(GpuWorkSource(trace, on_devices));
      for (Interval iv; busy.Next(&iv);) merged.push_back(iv);
      for (Iteration& it : set.iterations) {
        it.gpu_busy_in_window_ns = BusyWithin(merged, it.start_ns, it.end_ns);
      }
    }
    ComputeDistribution(set, options);
  }
  std::stable_sort(res.sets.begin(), res.sets.end(),
                   [](const IterationSet& a, const IterationSet& b) {
                     return a.iterations.size() > b.iterations.size();
                   });
  return res;
}

namespace {

double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

int64_t Round(double v) { return static_cast<int64_t>(std::llround(v)); }

}  // namespace

Status RunIterationsSection(const Trace& trace, int input, const AnalyzeOptions& options,
                            Report& report) {
  IterationsOptions o;
  o.name_regex = options.iterations_regex;
  ASSIGN_OR_RETURN(IterationsResult r, ComputeIterations(trace, o));
  Section& s = report.AddSection("iterations", "Iterations", input);
  if (r.sets.empty()) {
    s.AddFact("iterations", "Iterations", int64_t{0}, Unit::kCount);
    s.notes.push_back(
        r.default_regex
            ? "no iteration ranges found (looked for NVTX/annotation ranges named like "
              "ProfilerStep#N, iteration N, step N, *_step N, [Executor] _forward_step N, "
              "execute_context_...); name your loop's ranges so, or pass --iterations REGEX"
            : fmt::format("no range name fully matches --iterations '{}'", r.regex));
    return Status::Ok();
  }

  const IterationSet& main = r.sets[0];
  const int64_t top_n = std::max(options.top_n, 0);
  DurationNs wall_total = 0, window_busy_total = 0;
  std::vector<int64_t> busy, kernels;
  for (const Iteration& it : main.iterations) {
    wall_total += it.wall_ns();
    window_busy_total += it.gpu_busy_in_window_ns;
    busy.push_back(it.gpu_busy_launched_ns);
    kernels.push_back(it.launched.kernel_count);
  }
  const DurationStats busy_stats = ComputeDurationStats(busy);
  const DurationStats kernel_stats = ComputeDurationStats(kernels);

  s.AddFact("iterations", "Iterations", static_cast<int64_t>(main.iterations.size()), Unit::kCount);
  s.AddFact("name_pattern", "Name", main.pattern);
  s.AddFact("thread", "Thread (pid/tid)", fmt::format("{}/{}", main.pid, main.tid));
  s.AddFact("wall_median_ns", "Wall time median", Round(main.wall.median), Unit::kDurationNs);
  s.AddFact("wall_mean_ns", "Wall time mean", Round(main.wall.mean), Unit::kDurationNs);
  s.AddFact("wall_p90_ns", "Wall time p90", Round(main.wall.p90), Unit::kDurationNs);
  s.AddFact("wall_p99_ns", "Wall time p99", Round(main.wall.p99), Unit::kDurationNs);
  s.AddFact("wall_min_ns", "Wall time min", main.wall.min, Unit::kDurationNs);
  s.AddFact("wall_max_ns", "Wall time max", main.wall.max, Unit::kDurationNs);
  s.AddFact("wall_mad_ns", "Wall time MAD", Round(main.wall_mad_ns), Unit::kDurationNs);
  s.AddFact("gpu_busy_launched_median_ns", "GPU busy (launched work) median",
            Round(busy_stats.median), Unit::kDurationNs);
  s.AddFact("gpu_busy_in_window_pct", "GPU busy within iterations",
            Pct(static_cast<double>(window_busy_total), static_cast<double>(wall_total)),
            Unit::kPercent);
  s.AddFact("kernels_median", "Kernels per iteration (median)", kernel_stats.median, Unit::kCount);
  s.AddFact("outliers", "Outliers", main.outliers, Unit::kCount);
  if (main.outlier_threshold_ns > 0) {
    s.AddFact("outlier_threshold_ns", "Outlier above", Round(main.outlier_threshold_ns),
              Unit::kDurationNs);
  }

  const bool several = r.sets.size() > 1;
  if (several) {
    Table& sets = s.AddTable("sets", "Iteration sets (one per process)",
                             {{"pid", "pid", Unit::kNumber},
                              {"tid", "tid", Unit::kNumber},
                              {"name", "name", Unit::kText},
                              {"iterations", "iterations", Unit::kCount},
                              {"wall_median_ns", "median", Unit::kDurationNs},
                              {"wall_p90_ns", "p90", Unit::kDurationNs},
                              {"wall_max_ns", "max", Unit::kDurationNs},
                              {"outliers", "outliers", Unit::kCount}});
    for (const IterationSet& set : r.sets) {
      sets.rows.push_back({int64_t{set.pid}, int64_t{set.tid}, set.pattern,
                           static_cast<int64_t>(set.iterations.size()), Round(set.wall.median),
                           Round(set.wall.p90), set.wall.max, set.outliers});
    }
  }

  std::vector<Column> columns;
  if (several) columns.push_back({"pid", "pid", Unit::kNumber});
  for (Column c :
       std::vector<Column>{{"index", "#", Unit::kNumber},
                           {"name", "range", Unit::kText},
                           {"start_ns", "start", Unit::kTimestampNs},
                           {"wall_ns", "wall", Unit::kDurationNs},
                           {"gpu_busy_launched_ns", "GPU busy (launched)", Unit::kDurationNs},
                           {"gpu_busy_in_window_ns", "GPU busy (window)", Unit::kDurationNs},
                           {"gpu_busy_in_window_pct", "busy %", Unit::kPercent},
                           {"gpu_span_ns", "GPU span", Unit::kDurationNs},
                           {"kernels", "kernels", Unit::kCount},
                           {"memops", "memops", Unit::kCount},
                           {"outlier", "outlier", Unit::kText}}) {
    columns.push_back(std::move(c));
  }
  auto row_of = [&](const IterationSet& set, const Iteration& it) {
    std::vector<Value> row;
    if (several) row.push_back(int64_t{set.pid});
    for (Value v : std::vector<Value>{
             it.index, std::string(trace.str(it.name)), it.start_ns - trace.begin_ns(),
             it.wall_ns(), it.gpu_busy_launched_ns, it.gpu_busy_in_window_ns,
             Pct(static_cast<double>(it.gpu_busy_in_window_ns), static_cast<double>(it.wall_ns())),
             it.launched.span_ns(), it.launched.kernel_count, it.launched.memop_count,
             std::string(it.outlier ? "yes" : "")}) {
      row.push_back(std::move(v));
    }
    return row;
  };
  Table& all = s.AddTable("iterations", "Iterations in order", columns);
  int64_t total = 0;
  for (const IterationSet& set : r.sets) {
    for (const Iteration& it : set.iterations) {
      if (total++ < top_n) all.rows.push_back(row_of(set, it));
    }
  }
  all.total_rows = total;
  all.note =
      "GPU busy (launched) = union of the work launched inside the range; (window) = union "
      "of all GPU work on the process's devices within the range's wall time";

  std::vector<std::pair<const IterationSet*, const Iteration*>> outliers;
  for (const IterationSet& set : r.sets) {
    for (const Iteration& it : set.iterations) {
      if (it.outlier) outliers.push_back({&set, &it});
    }
  }
  if (!outliers.empty()) {
    std::stable_sort(outliers.begin(), outliers.end(), [](const auto& a, const auto& b) {
      return a.second->wall_ns() > b.second->wall_ns();
    });
    Table& t = s.AddTable("outliers", "Outlier iterations (slowest first)",
                          {{"pid", "pid", Unit::kNumber},
                           {"index", "#", Unit::kNumber},
                           {"name", "range", Unit::kText},
                           {"wall_ns", "wall", Unit::kDurationNs},
                           {"vs_median", "vs median", Unit::kRatio},
                           {"gpu_busy_launched_ns", "GPU busy (launched)", Unit::kDurationNs},
                           {"kernels", "kernels", Unit::kCount}});
    for (size_t i = 0; i < outliers.size() && static_cast<int64_t>(i) < top_n; ++i) {
      const auto& [set, it] = outliers[i];
      t.rows.push_back(
          {int64_t{set->pid}, it->index, std::string(trace.str(it->name)), it->wall_ns(),
           set->wall.median > 0 ? static_cast<double>(it->wall_ns()) / set->wall.median : 0.0,
           it->gpu_busy_launched_ns, it->launched.kernel_count});
    }
    t.total_rows = static_cast<int64_t>(outliers.size());
    t.note = fmt::format("outlier: wall > median + max(3 x 1.4826 x MAD, 0.5 x median)");
    if (main.iterations.front().outlier) {
      s.notes.push_back(
          "the first iteration is an outlier: often warm-up (allocator growth, autotuning, "
          "CUDA graph capture, lazy init); leave it out of steady-state numbers");
    }
  }

  auto add_series = [&](const char* key, const char* title, auto value) {
    Series& series = s.series.emplace_back();
    series.key = key;
    series.title = title;
    series.x_unit = Unit::kNumber;
    series.y_unit = Unit::kDurationNs;
    for (const Iteration& it : main.iterations) {
      series.x.push_back(static_cast<double>(it.index));
      series.y.push_back(static_cast<double>(value(it)));
    }
  };
  add_series("wall_ns", "Wall time per iteration",
             [](const Iteration& it) { return it.wall_ns(); });
  add_series("gpu_busy_launched_ns", "GPU busy (launched work) per iteration",
             [](const Iteration& it) { return it.gpu_busy_launched_ns; });
  add_series("gpu_busy_in_window_ns", "GPU busy within the iteration's wall time",
             [](const Iteration& it) { return it.gpu_busy_in_window_ns; });
  if (r.default_regex) {
    s.notes.push_back("iterations found by name; pass --iterations REGEX to choose others");
  }
  return Status::Ok();
}

}  // namespace sightline
