// The "threads" report section (threads.h, RunThreadsSection): the threads with their GIL, waits
// and hot frames, who held the GIL while the launching thread waited, garbage collection per
// process, the slowest iteration beside a typical one, the launching thread and every thread per
// iteration, NVTX time per thread, and the OS calls the launching thread waited in.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/threads/iteration_timelines.h"
#include "analyses/threads/threads.h"

// GCC 12 inlines the growth of these rows (std::vector<Value>) into the small table builders below
// and then warns that a moved std::string alternative "may be used uninitialized": the false
// positive inside libstdc++'s std::variant that CMakeLists.txt turns off for sanitizer builds.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace sightline {
namespace {

// What the threads table's columns mean, for those it has.
std::string ThreadsNote(const ThreadsResult& r) {
  std::string note =
      "launching = issues CUDA launch calls; profiler = the profiler's own thread (never blamed)";
  if (r.has_gil) note += "; GIL held/waited = union of its GIL intervals (nsys -t python-gil)";
  if (r.has_os_calls) {
    note +=
        "; OS waits = waiting OS calls (poll, select, futex, condition waits, sleeps, ...) outside "
        "CUDA calls and GIL waits (nsys -t osrt)";
  }
  if (r.has_off_cpu) {
    note +=
        "; off-CPU = switched out by the scheduler (nsys --cpuctxsw; not read for profiler "
        "threads)";
  }
  if (r.has_samples) {
    note += "; hot Python frames = innermost frames of its samples (--python-sampling)";
  }
  if (r.has_cpu_samples) {
    note += "; hot native functions = innermost frames of its CPU samples (nsys -s process-tree)";
  }
  if (!r.has_samples && r.has_py_functions) {
    note +=
        "; hot Python frames = python_function ranges by self time (PyTorch profiler "
        "with_stack=True)";
  }
  return note;
}

// One row per thread (the first top_n), with the columns the trace has data for.
void AddThreadsTable(const ThreadsResult& r, const AnalyzeOptions& options, Section& s) {
  std::vector<Column> columns = {
      {"pid", "pid", Unit::kNumber},          {"tid", "tid", Unit::kNumber},
      {"name", "name", Unit::kText},          {"role", "role", Unit::kText},
      {"launches", "launches", Unit::kCount}, {"cuda_api_ns", "CUDA API", Unit::kDurationNs}};
  if (r.has_gil) {
    columns.push_back({"gil_held_ns", "GIL held", Unit::kDurationNs});
    columns.push_back({"gil_waited_ns", "GIL waited", Unit::kDurationNs});
  }
  if (r.has_os_calls) columns.push_back({"os_wait_ns", "OS waits", Unit::kDurationNs});
  if (r.has_off_cpu) columns.push_back({"off_cpu_ns", "off-CPU", Unit::kDurationNs});
  if (r.has_samples) columns.push_back({"py_samples", "Py samples", Unit::kCount});
  if (r.has_samples || r.has_py_functions) {
    columns.push_back({"hot_frames", "hot Python frames", Unit::kText, true});
  }
  if (r.has_cpu_samples) {
    columns.push_back({"cpu_samples", "CPU samples", Unit::kCount});
    columns.push_back({"hot_native", "hot native functions", Unit::kText, true});
  }
  columns.push_back({"top_ranges", "top NVTX ranges", Unit::kText, true});
  Table& t = s.AddTable("threads", "Threads", columns);
  const size_t limit = std::min(r.threads.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < limit; ++i) {
    const ThreadRow& x = r.threads[i];
    std::vector<Value> row = {int64_t{x.pid}, int64_t{x.tid},
                              x.name,         std::string(ThreadRoleName(x.role)),
                              x.launches,     x.cuda_api_ns};
    if (r.has_gil) {
      row.push_back(x.gil_held_ns);
      row.push_back(x.gil_waited_ns);
    }
    if (r.has_os_calls) row.push_back(x.os_wait_ns);
    if (r.has_off_cpu) row.push_back(x.off_cpu_ns);
    if (r.has_samples) row.push_back(x.py_samples);
    if (r.has_samples || r.has_py_functions) row.push_back(x.hot_frames);
    if (r.has_cpu_samples) {
      row.push_back(x.cpu_samples);
      row.push_back(x.hot_native);
    }
    row.push_back(x.top_ranges);
    t.rows.push_back(std::move(row));
  }
  if (r.threads.size() > limit) t.total_rows = static_cast<int64_t>(r.threads.size());
  t.note = ThreadsNote(r);
}

// Who held the GIL while the launching thread waited for it.
void AddGilHoldersTable(const ThreadsResult& r, Section& s) {
  if (r.holders.empty()) return;
  Table& h = s.AddTable("gil_holders", "Who held the GIL while the launching thread waited",
                        {{"pid", "pid", Unit::kNumber},
                         {"tid", "tid", Unit::kNumber},
                         {"name", "name", Unit::kText},
                         {"role", "role", Unit::kText},
                         {"held_ns", "held meanwhile", Unit::kDurationNs}});
  for (const GilHolder& x : r.holders) {
    h.rows.push_back({int64_t{x.pid}, int64_t{x.tid}, x.name, std::string(ThreadRoleName(x.role)),
                      x.held_while_waited_ns});
  }
}

// Garbage collection per process, and its total as a fact.
void AddGcTable(const ThreadsResult& r, const AnalyzeOptions& options, Section& s) {
  if (r.gc.empty()) return;
  DurationNs total = 0;
  for (const ProcessGc& g : r.gc) total += g.gc_ns;
  s.AddFact("gc_ns", "Garbage collection (all processes)", total, Unit::kDurationNs);
  Table& g = s.AddTable("gc", "Garbage collection per process",
                        {{"pid", "pid", Unit::kNumber},
                         {"name", "process", Unit::kText},
                         {"collections", "collections", Unit::kCount},
                         {"gc_ns", "GC time", Unit::kDurationNs},
                         {"longest_ns", "longest", Unit::kDurationNs}});
  for (const ProcessGc& x : r.gc) {
    g.rows.push_back({int64_t{x.pid}, x.name, x.collections, x.gc_ns, x.longest_ns});
  }
  g.note = fmt::format("GC ranges named {} (--gc-ranges), read by time within their process",
                       fmt::join(options.gc_range_names, ", "));
}

// The launching thread's host time per iteration, part by part.
void AddLaunchingPerIterationTable(const ThreadsResult& r, Section& s) {
  if (r.per_iteration.empty()) return;
  Table& p = s.AddTable("launching_per_iteration", "The launching thread per iteration",
                        {{"part", "part", Unit::kText},
                         {"median_ns", "median", Unit::kDurationNs},
                         {"worst_ns", "worst", Unit::kDurationNs},
                         {"worst_iteration", "in iteration", Unit::kNumber},
                         {"total_ns", "total", Unit::kDurationNs}});
  for (const PerIterationHost& x : r.per_iteration) {
    p.rows.push_back(
        {x.label, static_cast<int64_t>(x.median_ns), x.worst_ns, x.worst_iteration, x.total_ns});
  }
  p.note =
      "each part clipped to the iteration; parts can overlap (docs/metrics.md, \"Host waits\")";
}

// Each thread's GIL, OS waits and off-CPU per iteration: the median against the slowest iteration.
void AddThreadsPerIterationTable(const ThreadsResult& r, const AnalyzeOptions& options,
                                 Section& s) {
  const ThreadsPerIterationResult& p = r.per_thread_iteration;
  if (p.threads.empty()) return;
  std::vector<Column> columns = {{"pid", "pid", Unit::kNumber},
                                 {"tid", "tid", Unit::kNumber},
                                 {"name", "name", Unit::kText},
                                 {"role", "role", Unit::kText}};
  auto pair = [&](const char* key, const char* label) {
    columns.push_back(
        {fmt::format("{}_median_ns", key), fmt::format("{} median", label), Unit::kDurationNs});
    columns.push_back(
        {fmt::format("{}_slowest_ns", key), fmt::format("{} slowest", label), Unit::kDurationNs});
  };
  if (r.has_gil) {
    pair("gil_held", "GIL held");
    pair("gil_waited", "GIL waited");
  }
  if (r.has_os_calls) pair("os_wait", "OS waits");
  if (r.has_off_cpu) pair("off_cpu", "off-CPU");
  Table& t =
      s.AddTable("threads_per_iteration",
                 fmt::format("Threads per iteration: median against the slowest (iteration {})",
                             p.slowest_iteration),
                 columns);
  const size_t limit = std::min(p.threads.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < limit; ++i) {
    const ThreadPerIteration& x = p.threads[i];
    std::vector<Value> row = {int64_t{x.pid}, int64_t{x.tid}, x.name,
                              std::string(ThreadRoleName(x.role))};
    auto add = [&](const PerIterationPart& part) {
      row.push_back(static_cast<int64_t>(part.median_ns));
      row.push_back(part.slowest_ns);
    };
    if (r.has_gil) {
      add(x.gil_held);
      add(x.gil_waited);
    }
    if (r.has_os_calls) add(x.os_wait);
    if (r.has_off_cpu) add(x.off_cpu);
    t.rows.push_back(std::move(row));
  }
  if (p.threads.size() > limit) t.total_rows = static_cast<int64_t>(p.threads.size());
  t.note = fmt::format(
      "each thread's time inside the main set's iterations, clipped to each; the median over the "
      "iterations (wall {}) against the slowest one (wall {})",
      FormatDuration(static_cast<int64_t>(p.median_wall_ns)), FormatDuration(p.slowest_wall_ns));
}

// Each thread's NVTX time by range name: over the trace and per iteration.
void AddThreadRangesTable(const ThreadsResult& r, const AnalyzeOptions& options, Section& s) {
  const ThreadRangesResult& x = r.ranges;
  if (x.rows.empty()) return;
  std::vector<Column> columns = {
      {"pid", "pid", Unit::kNumber},     {"tid", "tid", Unit::kNumber},
      {"thread", "thread", Unit::kText}, {"range", "range", Unit::kText},
      {"count", "count", Unit::kCount},  {"total_ns", "total", Unit::kDurationNs}};
  if (x.per_iteration) {
    columns.push_back({"iteration_median_ns", "per iteration median", Unit::kDurationNs});
    columns.push_back({"iteration_slowest_ns", "in the slowest", Unit::kDurationNs});
  }
  Table& t = s.AddTable("thread_ranges", "NVTX ranges per thread", columns);
  // The first top_n threads, each with its names.
  const size_t max_threads = static_cast<size_t>(std::max(options.top_n, 1));
  size_t threads_shown = 0, shown = 0;
  for (size_t i = 0; i < x.rows.size(); ++i) {
    const ThreadRangeRow& row = x.rows[i];
    const bool new_thread = i == 0 || row.pid != x.rows[i - 1].pid || row.tid != x.rows[i - 1].tid;
    if (new_thread && ++threads_shown > max_threads) break;
    std::vector<Value> v = {int64_t{row.pid}, int64_t{row.tid}, row.thread,
                            row.name,         row.count,        row.total_ns};
    if (x.per_iteration) {
      v.push_back(static_cast<int64_t>(row.per_iteration.median_ns));
      v.push_back(row.per_iteration.slowest_ns);
    }
    t.rows.push_back(std::move(v));
    ++shown;
  }
  if (shown < x.rows.size()) t.total_rows = static_cast<int64_t>(x.rows.size());
  t.note = fmt::format(
      "NVTX push/pop and start/end ranges and PyTorch record_function ranges on each thread, "
      "names grouped with digit runs as N; total = the union of a name's ranges (nesting in the "
      "same name not counted twice); at most {} names per thread by total",
      kRangeNamesPerThread);
  if (x.names_left_out > 0) t.note += fmt::format(" ({} more left out)", x.names_left_out);
  if (x.per_iteration) {
    t.note += fmt::format(
        "; per iteration = clipped to each iteration of the main set (its own iteration ranges "
        "left out): the median over the iterations, and the value in the slowest (iteration {})",
        x.slowest_iteration);
  }
}

// The OS calls the launching thread waited in, and where from when the trace has call chains.
void AddLaunchingOsWaitsTable(const ThreadsResult& r, const AnalyzeOptions& options, Section& s) {
  if (r.main_os_waits.empty()) return;
  std::vector<Column> columns = {{"name", "function", Unit::kText},
                                 {"calls", "calls", Unit::kCount},
                                 {"total_ns", "waited", Unit::kDurationNs},
                                 {"longest_ns", "longest", Unit::kDurationNs}};
  if (r.has_os_call_chains) {
    columns.push_back({"with_chain", "with call chain", Unit::kCount});
    columns.push_back({"callers", "called from", Unit::kText, true});
  }
  Table& o = s.AddTable("launching_os_waits", "OS calls the launching thread waited in", columns);
  const size_t n =
      std::min(r.main_os_waits.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < n; ++i) {
    const OsWaitRow& x = r.main_os_waits[i];
    std::vector<Value> row = {x.name, x.calls, x.total_ns, x.longest_ns};
    if (r.has_os_call_chains) {
      row.push_back(x.with_chain);
      row.push_back(x.callers);
    }
    o.rows.push_back(std::move(row));
  }
  if (r.main_os_waits.size() > n) o.total_rows = static_cast<int64_t>(r.main_os_waits.size());
  o.note = "outside CUDA calls (a driver's poll inside cudaStreamSynchronize counts as the sync)";
  if (r.has_os_call_chains) {
    o.note +=
        "; called from = the first frames of the calls' call chains (nsys OSRT_CALLCHAINS) "
        "outside the C library, innermost first (\"a < b\": a called by b), by waited time; "
        "nsys keeps a chain only for calls longer than --osrt-backtrace-threshold (80 us by "
        "default), so calls without one are counted apart (with call chain < calls)";
  }
}

}  // namespace

Status RunThreadsSection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(const ThreadsResult* result, CachedThreads(context));
  const ThreadsResult& r = *result;
  if (!r.has_gil && !r.has_gc && !r.has_os_calls && !r.has_samples && !r.has_off_cpu &&
      !r.has_py_functions && !r.has_cpu_samples) {
    return Status::Ok();
  }
  const AnalyzeOptions& options = context.options();
  Section& s = report.AddSection("threads", "Host threads", input);
  s.AddFact("threads", "Threads with activity", static_cast<int64_t>(r.threads.size()),
            Unit::kCount);
  if (r.main_tid >= 0) {
    s.AddFact("launching_thread", "Main launching thread (pid/tid)",
              fmt::format("{}/{}", r.main_pid, r.main_tid));
    if (r.has_gil) {
      s.AddFact("launching_thread_gil_wait_ns", "Its wait for the GIL", r.main_waited_ns,
                Unit::kDurationNs);
    }
  }
  AddThreadsTable(r, options, s);
  AddGilHoldersTable(r, s);
  AddGcTable(r, options, s);
  AddIterationTimelines(context, r, s);
  AddLaunchingPerIterationTable(r, s);
  AddThreadsPerIterationTable(r, options, s);
  AddThreadRangesTable(r, options, s);
  AddLaunchingOsWaitsTable(r, options, s);
  return Status::Ok();
}

}  // namespace sightline
