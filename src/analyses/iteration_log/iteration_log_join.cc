#include "analyses/iteration_log/iteration_log_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analyses/common/analysis_context.h"
#include "base/stats.h"

namespace sightline {

// The first run of digits in a range name: "iteration 12" -> 12, "ProfilerStep#7" -> 7,
// "[Executor] _forward_step 15: 0 ctx reqs, 32 gen reqs" -> 15. False when there is none.
bool IterationNumber(std::string_view name, int64_t* out) {
  size_t i = 0;
  while (i < name.size() && !std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i == name.size()) return false;
  int64_t v = 0;
  size_t digits = 0;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i, ++digits) {
    if (digits >= 18) return false;
    v = v * 10 + (name[i] - '0');
  }
  *out = v;
  return true;
}

namespace {

// The log entries of the trace's process: those whose pid is `pid` when any is; else all of them
// when the log holds a single process; else none (the caller says why).
std::vector<const IterationLogEntry*> EntriesOf(const IterationLog& log, int32_t pid,
                                                std::string* note) {
  std::set<int64_t> pids;
  for (const IterationLogEntry& e : log.entries) pids.insert(e.pid);
  std::vector<const IterationLogEntry*> out;
  for (const IterationLogEntry& e : log.entries) {
    if (pid >= 0 && e.pid == pid) out.push_back(&e);
  }
  if (!out.empty()) return out;
  if (pids.size() <= 1) {
    for (const IterationLogEntry& e : log.entries) out.push_back(&e);
    return out;
  }
  *note = fmt::format(
      "the log holds {} processes and none is the trace's (pid {}); write one log "
      "per process (%p or %r in SIGHTLINE_ITERATION_LOG)",
      pids.size(), pid);
  return out;
}

void JoinByCounter(const Trace& trace, const IterationSet& set,
                   const std::vector<const IterationLogEntry*>& entries, IterationLogJoin& join) {
  join.method = IterationLogJoinMethod::kIterationCounter;
  std::map<int64_t, const IterationLogEntry*> by_counter;
  for (const IterationLogEntry* e : entries) by_counter[e->iteration] = e;  // the last line wins
  int64_t unnumbered = 0;
  for (const Iteration& it : set.iterations) {
    int64_t counter = 0;
    if (!IterationNumber(trace.str(it.name), &counter)) {
      ++unnumbered;
      ++join.unmatched_trace;
      continue;
    }
    auto found = by_counter.find(counter);
    if (found == by_counter.end()) {
      ++join.unmatched_trace;
      continue;
    }
    IterationLogRow row;
    row.entry = found->second;
    row.trace_index = it.index;
    row.start_ns = it.start_ns;
    row.end_ns = it.end_ns;
    join.rows.push_back(row);
  }
  if (join.rows.empty()) {
    join.note = unnumbered == static_cast<int64_t>(set.iterations.size())
                    ? "the trace's iteration ranges carry no number to join on"
                    : "no iteration number of the trace appears in the log";
  } else if (join.unmatched_trace > 0) {
    join.note = fmt::format("{} of the trace's {} iterations have no log line",
                            join.unmatched_trace, set.iterations.size());
  }
}

void JoinByTimestamp(const Trace& trace, const std::vector<const IterationLogEntry*>& entries,
                     IterationLogJoin& join) {
  const TimeNs lo = trace.begin_ns(), hi = trace.end_ns();
  auto window = [](const IterationLogEntry& e, IterationLogJoinMethod m, TimeNs* s, TimeNs* t) {
    if (m == IterationLogJoinMethod::kRealtime) {
      if (e.timestamp_ns < 0 || e.latency_ns < 0) return false;
      *s = e.timestamp_ns;
      *t = e.timestamp_ns + e.latency_ns;
    } else {
      if (e.begin_monotonic_ns < 0 || e.end_monotonic_ns < 0) return false;
      *s = e.begin_monotonic_ns;
      *t = e.end_monotonic_ns;
    }
    return true;
  };
  // The clock whose windows overlap the trace's span most often is the trace's clock.
  IterationLogJoinMethod best = IterationLogJoinMethod::kNone;
  int64_t best_count = 0;
  for (IterationLogJoinMethod m :
       {IterationLogJoinMethod::kRealtime, IterationLogJoinMethod::kMonotonic}) {
    int64_t count = 0;
    for (const IterationLogEntry* e : entries) {
      TimeNs s = 0, t = 0;
      if (window(*e, m, &s, &t) && s < hi && t > lo) ++count;
    }
    if (count > best_count) best = m, best_count = count;
  }
  join.method = best;
  if (best == IterationLogJoinMethod::kNone) {
    join.note =
        "the trace has no iteration ranges, and neither of the log's clocks (timestamp_ns: "
        "CLOCK_REALTIME, *_monotonic_ns: CLOCK_MONOTONIC) overlaps the trace's time span; record "
        "with SIGHTLINE_NVTX_LEVEL>=1 so the trace carries the iteration ranges";
    return;
  }
  const std::vector<TimeNs>& starts = trace.kernels.start_ns;
  for (const IterationLogEntry* e : entries) {
    IterationLogRow row;
    if (!window(*e, best, &row.start_ns, &row.end_ns)) continue;
    if (row.start_ns >= hi || row.end_ns <= lo) continue;
    row.entry = e;
    row.kernels = std::lower_bound(starts.begin(), starts.end(), row.end_ns) -
                  std::lower_bound(starts.begin(), starts.end(), row.start_ns);
    join.rows.push_back(row);
  }
  if (static_cast<int64_t>(join.rows.size()) < join.log_entries) {
    join.note = fmt::format("{} of the log's {} lines fall inside the trace's time span",
                            join.rows.size(), join.log_entries);
  }
}

std::string UserText(const IterationLogEntry& e) {
  std::string out;
  for (const auto& [key, value] : e.user) {
    if (!out.empty()) out += ' ';
    out += key;
    out += '=';
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            out += v;
          } else {
            out += fmt::format("{}", v);
          }
        },
        value);
  }
  return out;
}

}  // namespace

const char* IterationLogJoinMethodName(IterationLogJoinMethod method) {
  switch (method) {
    case IterationLogJoinMethod::kIterationCounter:
      return "iteration counter";
    case IterationLogJoinMethod::kRealtime:
      return "timestamp (CLOCK_REALTIME)";
    case IterationLogJoinMethod::kMonotonic:
      return "timestamp (CLOCK_MONOTONIC)";
    case IterationLogJoinMethod::kNone:
      break;
  }
  return "none";
}

IterationLogJoin JoinIterationLog(AnalysisContext& context, const IterationLog& log) {
  const Trace& trace = context.trace();
  static const IterationsResult kNone;
  StatusOr<const IterationsResult*> found = context.loop().Iterations();
  const IterationsResult& iterations = found.ok() ? **found : kNone;
  IterationLogJoin join;
  join.format = log.format;
  join.skipped_lines = log.skipped_lines;
  const int32_t pid = iterations.sets.empty() ? -1 : iterations.sets[0].pid;
  std::string note;
  std::vector<const IterationLogEntry*> entries = EntriesOf(log, pid, &note);
  join.log_entries = static_cast<int64_t>(entries.size());
  if (entries.empty()) {
    join.note = note;
    return join;
  }
  if (!iterations.sets.empty()) {
    join.set = &iterations.sets[0];
    JoinByCounter(trace, iterations.sets[0], entries, join);
  } else {
    JoinByTimestamp(trace, entries, join);
  }
  return join;
}

const IterationLogJoin* IterationLogJoinOf(AnalysisContext& context) {
  const IterationLog* log = context.inputs().iteration_log.get();
  if (log == nullptr) return nullptr;
  StatusOr<const IterationLogJoin*> join = context.results().Get<IterationLogJoin>(
      [&] { return StatusOr<IterationLogJoin>(JoinIterationLog(context, *log)); });
  return join.ok() ? *join : nullptr;  // the join itself never fails
}

namespace {

// Iterations that ran context (prefill) work against decode-only ones: the trace's wall time and
// the GPU time they launched (counter join: the rows point at the trace's iterations).
void AddPrefillVsDecode(const IterationLogJoin& join, Section& s) {
  if (join.set == nullptr || join.method != IterationLogJoinMethod::kIterationCounter) return;
  struct Group {
    std::vector<int64_t> wall, busy, kernels;
  } prefill, decode;
  for (const IterationLogRow& r : join.rows) {
    const auto& ctx = r.entry->field(IterationLogField::kContextRequests);
    if (!ctx || r.trace_index < 0 ||
        r.trace_index >= static_cast<int64_t>(join.set->iterations.size())) {
      continue;
    }
    const Iteration& it = join.set->iterations[r.trace_index];
    Group& g = *ctx > 0 ? prefill : decode;
    g.wall.push_back(it.wall_ns());
    g.busy.push_back(it.gpu_busy_launched_ns);
    g.kernels.push_back(it.launched.kernel_count);
  }
  if (prefill.wall.empty() && decode.wall.empty()) return;
  s.AddFact("iterations_with_context", "Iterations with context (prefill) work",
            static_cast<int64_t>(prefill.wall.size()), Unit::kCount);
  Table& t = s.AddTable("prefill_vs_decode", "Iterations with prefill work against decode-only",
                        {{"kind", "iterations", Unit::kText},
                         {"count", "count", Unit::kCount},
                         {"wall_median_ns", "wall median", Unit::kDurationNs},
                         {"wall_mean_ns", "wall mean", Unit::kDurationNs},
                         {"gpu_busy_launched_median_ns", "GPU busy median", Unit::kDurationNs},
                         {"kernels_median", "kernels median", Unit::kCount}});
  auto mean = [](const std::vector<int64_t>& v) {
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  for (const auto& [name, g] :
       {std::pair<const char*, const Group*>{"with context", &prefill}, {"decode only", &decode}}) {
    if (g->wall.empty()) continue;
    t.rows.push_back({std::string(name), static_cast<int64_t>(g->wall.size()), Median(g->wall),
                      mean(g->wall), Median(g->busy), Median(g->kernels)});
  }
  t.note =
      "from the log's context-request count per iteration; wall and GPU busy (launched work) "
      "from the trace";
}

}  // namespace

const std::vector<IterationLogFieldColumn>& IterationLogFieldColumns() {
  static const auto* columns = new std::vector<IterationLogFieldColumn>{
      {IterationLogField::kActiveRequests, "active", Unit::kCount},
      {IterationLogField::kContextRequests, "ctx reqs", Unit::kCount},
      {IterationLogField::kGenerationRequests, "gen reqs", Unit::kCount},
      {IterationLogField::kContextTokens, "ctx tokens", Unit::kCount},
      {IterationLogField::kGeneratedTokens, "gen tokens", Unit::kCount},
      {IterationLogField::kKvBlocksUsed, "KV used", Unit::kCount},
      {IterationLogField::kKvBlocksFree, "KV free", Unit::kCount},
      {IterationLogField::kKvBlocksMax, "KV max", Unit::kCount},
      {IterationLogField::kKvTokensPerBlock, "tok/block", Unit::kCount},
      {IterationLogField::kGpuMemoryBytes, "GPU mem", Unit::kBytes},
      {IterationLogField::kCpuMemoryBytes, "CPU mem", Unit::kBytes},
      {IterationLogField::kPinnedMemoryBytes, "pinned", Unit::kBytes}};
  return *columns;
}

void AddIterationLogToSection(const Trace& trace, const IterationLogJoin& join, int64_t top_n,
                              Section& s) {
  s.AddFact("iteration_log_lines", "Iteration log lines", join.log_entries, Unit::kCount);
  s.AddFact("iteration_log_join", "Iteration log joined by",
            std::string(IterationLogJoinMethodName(join.method)));
  s.AddFact("iteration_log_matched", "Iterations with a log line",
            static_cast<int64_t>(join.rows.size()), Unit::kCount);
  if (join.format != "sightline") {
    s.AddFact("iteration_log_format", "Iteration log format", join.format);
  }
  if (join.skipped_lines > 0) {
    s.AddFact("iteration_log_other_lines", "Other lines in the log (skipped)", join.skipped_lines,
              Unit::kCount);
  }
  if (!join.note.empty()) s.notes.push_back("iteration log: " + join.note);
  if (join.rows.empty()) return;
  AddPrefillVsDecode(join, s);

  // Totals over the matched iterations: generated tokens per second of iteration latency.
  int64_t tokens = 0, latency = 0;
  bool have_tokens = false;
  for (const IterationLogRow& r : join.rows) {
    const auto& t = r.entry->field(IterationLogField::kGeneratedTokens);
    if (t && r.entry->latency_ns > 0) {
      have_tokens = true;
      tokens += *t;
      latency += r.entry->latency_ns;
    }
  }
  if (have_tokens && latency > 0) {
    s.AddFact("generated_tokens_per_s", "Generated tokens/s (log, over iteration latency)",
              static_cast<double>(tokens) * 1e9 / static_cast<double>(latency), Unit::kNumber);
  }

  // Columns: the counter, where it sits in the trace, then only the fields some line has.
  const bool by_counter = join.method == IterationLogJoinMethod::kIterationCounter;
  std::vector<Column> columns = {{"iteration", "iteration", Unit::kNumber}};
  if (by_counter) columns.push_back({"index", "#", Unit::kNumber});
  columns.push_back({"start_ns", "start", Unit::kTimestampNs});
  if (by_counter) columns.push_back({"wall_ns", "trace wall", Unit::kDurationNs});
  columns.push_back({"latency_ns", "log latency", Unit::kDurationNs});
  if (!by_counter) columns.push_back({"kernels", "kernels", Unit::kCount});
  std::vector<IterationLogField> present;
  for (const IterationLogFieldColumn& c : IterationLogFieldColumns()) {
    const bool any = std::any_of(join.rows.begin(), join.rows.end(), [&](const IterationLogRow& r) {
      return r.entry->field(c.field).has_value();
    });
    if (!any) continue;
    present.push_back(c.field);
    columns.push_back({std::string(IterationLogFieldKey(c.field)), c.title, c.unit});
  }
  const bool any_user =
      std::any_of(join.rows.begin(), join.rows.end(),
                  [](const IterationLogRow& r) { return !r.entry->user.empty(); });
  if (any_user) columns.push_back({"user", "user fields", Unit::kText, /*optional=*/true});

  Table& t = s.AddTable("iteration_log", "Iteration log (per iteration)", columns);
  for (const IterationLogRow& r : join.rows) {
    if (static_cast<int64_t>(t.rows.size()) >= top_n) break;
    const IterationLogEntry& e = *r.entry;
    // Cells are emplaced by type: GCC 12 warns (falsely) on moving temporaries of Value.
    std::vector<Value> row;
    auto add_int = [&row](int64_t v) { row.emplace_back(std::in_place_type<int64_t>, v); };
    add_int(e.iteration);
    if (by_counter) add_int(r.trace_index);
    add_int(r.start_ns - trace.begin_ns());
    if (by_counter) add_int(r.end_ns - r.start_ns);
    if (e.latency_ns >= 0) {
      add_int(e.latency_ns);
    } else {
      row.emplace_back();
    }
    if (!by_counter) add_int(r.kernels);
    for (IterationLogField f : present) {
      const auto& v = e.field(f);
      if (v) {
        add_int(*v);
      } else {
        row.emplace_back();
      }
    }
    if (any_user) row.emplace_back(std::in_place_type<std::string>, UserText(e));
    t.rows.push_back(std::move(row));
  }
  t.total_rows = static_cast<int64_t>(join.rows.size());
  t.note = by_counter ? "joined on the number in the trace's iteration range names; trace wall = "
                        "the range's duration, log latency = IterationEnd - IterationBegin"
                      : "joined by timestamp; kernels = kernels that start inside the window";
}

}  // namespace sightline
