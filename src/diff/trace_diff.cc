#include "diff/trace_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "base/name_pattern.h"
#include "diff/name_normalize.h"
#include "facts/iterations.h"
#include "facts/kernel_category.h"
#include "facts/launch_projection.h"

namespace sightline {
namespace {

// One side's totals for one key.
struct Agg {
  std::string name, detail, category;
  int64_t count = 0;
  DurationNs total_ns = 0;
  DurationNs largest_part_ns = -1;  // the display name comes from the largest contributor
};

// Keys in first-seen order with their totals.
struct AggMap {
  std::vector<std::string> keys;
  std::unordered_map<std::string, Agg> by_key;

  void Add(const std::string& key, std::string_view name, std::string_view detail, int64_t count,
           DurationNs total_ns, std::string_view category = {}) {
    auto [it, inserted] = by_key.try_emplace(key);
    if (inserted) keys.push_back(key);
    Agg& a = it->second;
    a.count += count;
    a.total_ns += total_ns;
    if (total_ns > a.largest_part_ns) {
      a.largest_part_ns = total_ns;
      a.name = name;
      a.detail = detail;
      a.category = category;
    }
  }
};

struct Scale {
  double before = 1, after = 1;  // multiplies totals into the basis
  DurationNs gpu_before_ns = 0;  // baseline GPU time, for shares
};

DiffItem MakeItem(const std::string& key, const Agg* before, const Agg* after, const Scale& s) {
  DiffItem item;
  item.key = key;
  const Agg* shown = before != nullptr ? before : after;
  item.name = shown->name;
  item.detail = shown->detail;
  item.category = shown->category;
  if (before != nullptr) {
    item.count_before = before->count;
    item.total_before_ns = before->total_ns;
  }
  if (after != nullptr) {
    item.count_after = after->count;
    item.total_after_ns = after->total_ns;
  }
  item.before_ns = static_cast<double>(item.total_before_ns) * s.before;
  item.after_ns = static_cast<double>(item.total_after_ns) * s.after;
  item.share_before_pct =
      s.gpu_before_ns > 0 ? 100.0 * static_cast<double>(item.total_before_ns) / s.gpu_before_ns : 0;
  return item;
}

// Largest regression first; equal deltas by baseline time, then key, so output is stable.
void SortByDelta(std::vector<DiffItem>& items) {
  std::sort(items.begin(), items.end(), [](const DiffItem& a, const DiffItem& b) {
    if (a.delta_ns() != b.delta_ns()) return a.delta_ns() > b.delta_ns();
    if (a.before_ns != b.before_ns) return a.before_ns > b.before_ns;
    return a.key < b.key;
  });
}

void SortBySize(std::vector<DiffItem>& items) {
  std::sort(items.begin(), items.end(), [](const DiffItem& a, const DiffItem& b) {
    const double x = std::max(a.before_ns, a.after_ns), y = std::max(b.before_ns, b.after_ns);
    if (x != y) return x > y;
    return a.key < b.key;
  });
}

// Compares two AggMaps key by key: matched (both), appeared (after only), vanished (before only).
void CompareMaps(const AggMap& before, const AggMap& after, const Scale& s,
                 std::vector<DiffItem>& matched, std::vector<DiffItem>* appeared,
                 std::vector<DiffItem>* vanished) {
  for (const std::string& k : before.keys) {
    const Agg& b = before.by_key.at(k);
    auto it = after.by_key.find(k);
    if (it != after.by_key.end()) {
      matched.push_back(MakeItem(k, &b, &it->second, s));
    } else if (vanished != nullptr) {
      vanished->push_back(MakeItem(k, &b, nullptr, s));
    } else {
      matched.push_back(MakeItem(k, &b, nullptr, s));
    }
  }
  for (const std::string& k : after.keys) {
    if (before.by_key.count(k) != 0) continue;
    DiffItem item = MakeItem(k, nullptr, &after.by_key.at(k), s);
    if (appeared != nullptr) {
      appeared->push_back(std::move(item));
    } else {
      matched.push_back(std::move(item));
    }
  }
}

// Second pass: an unmatched baseline kernel and an unmatched candidate kernel whose keys differ
// only in template arguments match when each is the only unmatched one with that base name on its
// side (e.g. a library version changed a template parameter).
void MatchLoosely(std::vector<DiffItem>& matched, std::vector<DiffItem>& appeared,
                  std::vector<DiffItem>& vanished, const Scale& s, int64_t& loose_matches) {
  std::unordered_map<std::string, int> base_count_before, base_count_after;
  for (const DiffItem& v : vanished) ++base_count_before[KernelBaseKey(v.key)];
  for (const DiffItem& a : appeared) ++base_count_after[KernelBaseKey(a.key)];
  std::unordered_map<std::string, size_t> appeared_by_base;
  for (size_t i = 0; i < appeared.size(); ++i) {
    const std::string base = KernelBaseKey(appeared[i].key);
    if (base_count_after[base] == 1) appeared_by_base[base] = i;
  }
  std::vector<bool> appeared_used(appeared.size(), false);
  std::vector<DiffItem> still_vanished;
  for (DiffItem& v : vanished) {
    const std::string base = KernelBaseKey(v.key);
    auto it = appeared_by_base.find(base);
    if (base_count_before[base] != 1 || it == appeared_by_base.end()) {
      still_vanished.push_back(std::move(v));
      continue;
    }
    const DiffItem& a = appeared[it->second];
    appeared_used[it->second] = true;
    DiffItem m = v;
    m.key = base;
    m.count_after = a.count_after;
    m.total_after_ns = a.total_after_ns;
    m.after_ns = static_cast<double>(a.total_after_ns) * s.after;
    m.loose_match = true;
    matched.push_back(std::move(m));
    ++loose_matches;
  }
  vanished = std::move(still_vanished);
  std::vector<DiffItem> still_appeared;
  for (size_t i = 0; i < appeared.size(); ++i) {
    if (!appeared_used[i]) still_appeared.push_back(std::move(appeared[i]));
  }
  appeared = std::move(still_appeared);
}

// One side's GPU work in scope: kernels by normalized name, categories, and sums.
struct SideWork {
  AggMap kernels;     // detail: the full name
  AggMap categories;  // kernel categories and memory-operation kinds
  int64_t kernel_count = 0, memop_count = 0;
  DurationNs kernel_ns = 0, memop_ns = 0;
  DurationNs gpu_ns() const { return kernel_ns + memop_ns; }
};

// `in_scope` is indexed by LaunchIndex work id (kernel rows, then memory-operation rows); empty
// means all work. Kernels group by full-name id first (a vector lookup per kernel), so names are
// normalized and classified once per distinct name.
SideWork CollectWork(AnalysisContext& context, const std::vector<uint8_t>& in_scope) {
  const Trace& trace = context.trace();
  SideWork w;
  const KernelTable& k = trace.kernels;
  struct Group {
    StringId name;
    int64_t count = 0;
    DurationNs total_ns = 0;
  };
  std::vector<int32_t> group_of(trace.strings.size(), -1);
  std::vector<Group> groups;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!in_scope.empty() && in_scope[i] == 0) continue;
    int32_t& g = group_of[k.name[i].value];
    if (g < 0) {
      g = static_cast<int32_t>(groups.size());
      groups.push_back({k.name[i]});
    }
    groups[g].count += 1;
    groups[g].total_ns += k.dur_ns(i);
  }
  // Largest first, so AggMap's first-seen order (and ties later) follow time.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.total_ns > b.total_ns; });
  for (const Group& g : groups) {
    const std::string_view full = trace.str(g.name);
    const std::string key = NormalizeKernelName(full);
    const char* category = KernelCategoryName(context.kernels().Category(g.name));
    w.kernels.Add(key, KernelDisplayName(key), full, g.count, g.total_ns, category);
    w.categories.Add(category, category, "kernels", g.count, g.total_ns);
    w.kernel_count += g.count;
    w.kernel_ns += g.total_ns;
  }
  std::array<int64_t, 8> count{};
  std::array<DurationNs, 8> total{};
  const MemOpTable& mo = trace.memops;
  for (size_t i = 0; i < mo.size(); ++i) {
    if (!in_scope.empty() && in_scope[k.size() + i] == 0) continue;
    const size_t kind = static_cast<size_t>(mo.kind[i]);
    if (kind >= count.size()) continue;
    ++count[kind];
    total[kind] += mo.dur_ns(i);
    w.memop_count += 1;
    w.memop_ns += mo.dur_ns(i);
  }
  for (size_t kind = 0; kind < count.size(); ++kind) {
    if (count[kind] == 0) continue;
    const MemOpKind mk = static_cast<MemOpKind>(kind);
    const std::string name =
        mk == MemOpKind::kMemset ? "memset" : fmt::format("memcpy {}", MemOpKindName(mk));
    w.categories.Add(name, name, "memory operations", count[kind], total[kind]);
  }
  return w;
}

// Work ids (LaunchIndex numbering) launched inside one of the set's iterations.
std::vector<uint8_t> IterationScope(AnalysisContext& context, const IterationSet& set) {
  const Trace& trace = context.trace();
  const LaunchIndex& index = context.host().Launches();
  std::vector<uint8_t> scope(trace.kernels.size() + trace.memops.size(), 0);
  const int32_t thread = index.ThreadOf(set.pid, set.tid);
  if (thread < 0) return scope;
  for (const Iteration& it : set.iterations) {
    for (uint32_t work : index.LaunchedIn(thread, it.start_ns, it.end_ns)) scope[work] = 1;
  }
  return scope;
}

AggMap RangeAggs(const Trace& trace, const NvtxProjectionResult& projection) {
  AggMap m;
  for (const NvtxRangeGroup& g : projection.groups) {
    const std::string name = DigitRunsToN(trace.str(g.name));
    const std::string_view domain = trace.str(g.domain);
    const std::string key = fmt::format("{}\x1f{}\x1f{}", name, domain, g.depth);
    const std::string path = DigitRunsToN(g.path);
    m.Add(key, domain.empty() ? path : fmt::format("{}: {}", domain, path), path, g.count,
          g.work.gpu_time_ns());
  }
  return m;
}

DiffItem StatItem(std::string name, double before, double after, int64_t count_before = 0,
                  int64_t count_after = 0) {
  DiffItem item;
  item.key = name;
  item.name = std::move(name);
  item.before_ns = before;
  item.after_ns = after;
  item.total_before_ns = static_cast<DurationNs>(before);
  item.total_after_ns = static_cast<DurationNs>(after);
  item.count_before = count_before;
  item.count_after = count_after;
  return item;
}

IterationDiff CompareIterations(const IterationSet& b, const IterationSet& a) {
  IterationDiff d;
  d.count_before = static_cast<int64_t>(b.iterations.size());
  d.count_after = static_cast<int64_t>(a.iterations.size());
  d.pattern_before = b.pattern;
  d.pattern_after = a.pattern;
  auto mean = [](const IterationSet& set, auto field) {
    double sum = 0;
    for (const Iteration& it : set.iterations) sum += static_cast<double>(field(it));
    return set.iterations.empty() ? 0.0 : sum / static_cast<double>(set.iterations.size());
  };
  d.stats.push_back(
      StatItem("wall time, mean", b.wall.mean, a.wall.mean, d.count_before, d.count_after));
  d.stats.push_back(
      StatItem("wall time, median", b.wall.median, a.wall.median, d.count_before, d.count_after));
  d.stats.push_back(
      StatItem("wall time, p90", b.wall.p90, a.wall.p90, d.count_before, d.count_after));
  d.stats.push_back(StatItem("wall time, max", static_cast<double>(b.wall.max),
                             static_cast<double>(a.wall.max), d.count_before, d.count_after));
  auto busy = [](const Iteration& it) { return it.gpu_busy_in_window_ns; };
  d.stats.push_back(StatItem("GPU busy in iteration, mean", mean(b, busy), mean(a, busy),
                             d.count_before, d.count_after));
  auto launched = [](const Iteration& it) { return it.launched.gpu_time_ns(); };
  d.stats.push_back(StatItem("GPU time launched, mean", mean(b, launched), mean(a, launched),
                             d.count_before, d.count_after));
  const size_t n = std::min(b.iterations.size(), a.iterations.size());
  for (size_t i = 0; i < n; ++i) {
    DiffItem item =
        StatItem(fmt::format("iteration {}", i), static_cast<double>(b.iterations[i].wall_ns()),
                 static_cast<double>(a.iterations[i].wall_ns()));
    item.count_before = b.iterations[i].launched.kernel_count;
    item.count_after = a.iterations[i].launched.kernel_count;
    d.by_index.push_back(std::move(item));
  }
  return d;
}

// GPU busy summed over the trace's devices.
DurationNs BusyTotal(AnalysisContext& context) {
  DurationNs total = 0;
  for (int32_t d : context.gpu().GpuDevices()) total += TotalLength(context.gpu().Busy(d));
  return total;
}

void ApplyGate(const TraceDiffOptions& options, TraceDiffResult& r) {
  GateResult& g = r.gate;
  g.min_share_pct = options.min_share_pct;
  for (const DiffItem& k : r.kernels)
    g.gated_kernels += k.share_before_pct >= options.min_share_pct;
  if (!options.fail_if_slower_pct.has_value()) return;
  g.enabled = true;
  g.threshold_pct = *options.fail_if_slower_pct;
  auto check = [&](const DiffItem& item, const char* kind, const std::string& what) {
    // A baseline of 0 cannot grow by a percentage; such items are not gated
    // (docs/analyses/diff.md).
    if (item.before_ns <= 0) return;
    const double growth = item.delta_pct();
    if (growth > g.threshold_pct) {
      g.failures.push_back({what, kind, item.before_ns, item.after_ns, growth});
    }
  };
  check(r.gpu_time, "total", "GPU time");
  const size_t first_kernel = g.failures.size();
  for (const DiffItem& k : r.kernels) {
    if (k.share_before_pct < options.min_share_pct) continue;
    check(k, "kernel", k.name);
  }
  std::stable_sort(
      g.failures.begin() + static_cast<std::ptrdiff_t>(first_kernel), g.failures.end(),
      [](const GateFailure& a, const GateFailure& b) { return a.growth_pct > b.growth_pct; });
  g.failed = !g.failures.empty();
}

Status CheckHasGpuWork(const Trace& trace, const char* role) {
  if (trace.HasGpuWork()) return Status::Ok();
  return InvalidInputError(fmt::format(
      "{}: the {} trace has no GPU kernels or memory operations, so there is nothing to compare; "
      "record it with CUDA tracing on (nsys -t cuda, or PyTorch profiler with "
      "ProfilerActivity.CUDA)",
      trace.source.path, role));
}

}  // namespace

const char* DiffBasisName(DiffBasis basis) {
  return basis == DiffBasis::kPerIteration ? "per_iteration" : "total";
}

StatusOr<TraceDiffResult> ComputeTraceDiff(AnalysisContext& baseline_context,
                                           AnalysisContext& candidate_context,
                                           const TraceDiffOptions& options) {
  const Trace& baseline = baseline_context.trace();
  const Trace& candidate = candidate_context.trace();
  RETURN_IF_ERROR(CheckHasGpuWork(baseline, "baseline"));
  RETURN_IF_ERROR(CheckHasGpuWork(candidate, "candidate"));
  TraceDiffResult r;

  ASSIGN_OR_RETURN(const IterationsResult* it_b, baseline_context.loop().Iterations());
  ASSIGN_OR_RETURN(const IterationsResult* it_a, candidate_context.loop().Iterations());
  const IterationSet* set_b = it_b->sets.empty() ? nullptr : &it_b->sets[0];
  const IterationSet* set_a = it_a->sets.empty() ? nullptr : &it_a->sets[0];
  r.iterations_before = set_b != nullptr ? static_cast<int64_t>(set_b->iterations.size()) : 0;
  r.iterations_after = set_a != nullptr ? static_cast<int64_t>(set_a->iterations.size()) : 0;

  const SideWork all_b = CollectWork(baseline_context, {});
  const SideWork all_a = CollectWork(candidate_context, {});
  Scale unscaled;
  unscaled.gpu_before_ns = all_b.gpu_ns();
  auto total_item = [](const char* name, int64_t count_b, DurationNs b, int64_t count_a,
                       DurationNs a, const Scale& s) {
    Agg ab{name, "", "", count_b, b}, aa{name, "", "", count_a, a};
    return MakeItem(name, &ab, &aa, s);
  };
  r.trace_gpu_time =
      total_item("GPU time, whole trace", all_b.kernel_count + all_b.memop_count, all_b.gpu_ns(),
                 all_a.kernel_count + all_a.memop_count, all_a.gpu_ns(), unscaled);
  r.gpu_busy = total_item("GPU busy (union), whole trace", 0, BusyTotal(baseline_context), 0,
                          BusyTotal(candidate_context), unscaled);

  // The basis: per iteration when both traces have iterations that hold most of their GPU work.
  Scale scale = unscaled;
  const SideWork* work_b = &all_b;
  const SideWork* work_a = &all_a;
  SideWork iter_b, iter_a;
  if (set_b != nullptr && set_a != nullptr) {
    r.iterations = CompareIterations(*set_b, *set_a);
    iter_b = CollectWork(baseline_context, IterationScope(baseline_context, *set_b));
    iter_a = CollectWork(candidate_context, IterationScope(candidate_context, *set_a));
    r.iteration_coverage_before_pct =
        100.0 * iter_b.gpu_ns() / std::max<DurationNs>(1, all_b.gpu_ns());
    r.iteration_coverage_after_pct =
        100.0 * iter_a.gpu_ns() / std::max<DurationNs>(1, all_a.gpu_ns());
    if (r.iteration_coverage_before_pct >= kMinIterationCoveragePct &&
        r.iteration_coverage_after_pct >= kMinIterationCoveragePct) {
      r.basis = DiffBasis::kPerIteration;
      r.basis_reason = fmt::format("both have iterations, holding {:.1f}% / {:.1f}% of GPU time",
                                   r.iteration_coverage_before_pct, r.iteration_coverage_after_pct);
      work_b = &iter_b;
      work_a = &iter_a;
      scale.before = 1.0 / static_cast<double>(r.iterations_before);
      scale.after = 1.0 / static_cast<double>(r.iterations_after);
      scale.gpu_before_ns = iter_b.gpu_ns();
    } else {
      r.basis_reason = fmt::format("iterations hold only {:.1f}% / {:.1f}% of GPU time (< {:.0f}%)",
                                   r.iteration_coverage_before_pct, r.iteration_coverage_after_pct,
                                   kMinIterationCoveragePct);
    }
  } else {
    r.basis_reason = fmt::format("iterations found: {} in the baseline, {} in the candidate",
                                 r.iterations_before, r.iterations_after);
  }

  r.kernel_time = total_item("kernel time", work_b->kernel_count, work_b->kernel_ns,
                             work_a->kernel_count, work_a->kernel_ns, scale);
  r.memop_time = total_item("memory-operation time", work_b->memop_count, work_b->memop_ns,
                            work_a->memop_count, work_a->memop_ns, scale);
  r.gpu_time = total_item("GPU time", work_b->kernel_count + work_b->memop_count, work_b->gpu_ns(),
                          work_a->kernel_count + work_a->memop_count, work_a->gpu_ns(), scale);

  // Kernels.
  r.distinct_before = static_cast<int64_t>(work_b->kernels.keys.size());
  r.distinct_after = static_cast<int64_t>(work_a->kernels.keys.size());
  CompareMaps(work_b->kernels, work_a->kernels, scale, r.kernels, &r.appeared, &r.vanished);
  MatchLoosely(r.kernels, r.appeared, r.vanished, scale, r.loose_matches);
  DurationNs matched_b = 0, matched_a = 0;
  for (const DiffItem& k : r.kernels) {
    matched_b += k.total_before_ns;
    matched_a += k.total_after_ns;
  }
  r.matched_share_before_pct = work_b->kernel_ns > 0 ? 100.0 * matched_b / work_b->kernel_ns : 0;
  r.matched_share_after_pct = work_a->kernel_ns > 0 ? 100.0 * matched_a / work_a->kernel_ns : 0;
  SortByDelta(r.kernels);
  SortBySize(r.appeared);
  SortBySize(r.vanished);

  // Categories (kernel categories and memory-operation kinds; a missing one counts as 0).
  CompareMaps(work_b->categories, work_a->categories, scale, r.categories, nullptr, nullptr);
  SortByDelta(r.categories);

  // NVTX / annotation ranges: totals over the whole traces.
  ASSIGN_OR_RETURN(NvtxProjectionResult np_b, ComputeNvtxProjection(baseline_context, {}));
  ASSIGN_OR_RETURN(NvtxProjectionResult np_a, ComputeNvtxProjection(candidate_context, {}));
  CompareMaps(RangeAggs(baseline, np_b), RangeAggs(candidate, np_a), unscaled, r.ranges, nullptr,
              nullptr);
  SortByDelta(r.ranges);

  ApplyGate(options, r);
  return r;
}

}  // namespace sightline
