#include "model/trace_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>
#include <unordered_map>

namespace sightline {
namespace {

// Reorders one column by a permutation (perm[i] = old row of new row i).
template <typename T>
void Permute(std::vector<T>& column, const std::vector<uint32_t>& perm) {
  std::vector<T> out;
  out.reserve(column.size());
  for (uint32_t old_row : perm) out.push_back(column[old_row]);
  column.swap(out);
}

// Sorts keys (a strict total order: no two keys equal) that mostly come in order already. Tables
// arrive as a few sorted runs (one per thread or stream, or per profiler flush), or sorted but for
// a few rows out of place (a copy's call recorded before the launch that precedes it), and
// std::sort does not exploit either:
// - few rows out of place: the rows that keep the order are kept in place, the others sorted
//   apart and merged back (one pass, plus a sort of the few);
// - few runs: the runs are merged pairwise (n log runs, sequential);
// - otherwise std::sort.
template <typename Key, typename Less>
void SortMostlySorted(std::vector<Key>& keys, const Less& less) {
  const size_t n = keys.size();
  size_t runs = n > 0 ? 1 : 0, misplaced = 0;
  for (size_t i = 1, last = 0; i < n; ++i) {
    if (less(keys[i], keys[i - 1])) ++runs;
    if (less(keys[i], keys[last])) {
      ++misplaced;
    } else {
      last = i;
    }
  }
  if (misplaced == 0) return;
  if (misplaced <= n / 8) {
    std::vector<Key> rest;
    rest.reserve(misplaced);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (kept == 0 || !less(keys[i], keys[kept - 1])) {
        keys[kept++] = keys[i];
      } else {
        rest.push_back(keys[i]);
      }
    }
    std::sort(rest.begin(), rest.end(), less);
    // Merged from the back: the kept rows fill keys[0, kept), the free tail is rest's size.
    size_t i = kept, j = rest.size(), out = n;
    while (j > 0) {
      if (i > 0 && less(rest[j - 1], keys[i - 1])) {
        keys[--out] = keys[--i];
      } else {
        keys[--out] = rest[--j];
      }
    }
    return;
  }
  if (runs > n / 16) {
    std::sort(keys.begin(), keys.end(), less);
    return;
  }
  std::vector<size_t> bounds = {0};  // run starts, then n
  for (size_t i = 1; i < n; ++i) {
    if (less(keys[i], keys[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  std::vector<Key> merged(n);
  while (bounds.size() > 2) {
    std::vector<size_t> next = {0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t a = bounds[r], b = bounds[r + 1], c = r + 2 < bounds.size() ? bounds[r + 2] : b;
      std::merge(keys.begin() + a, keys.begin() + b, keys.begin() + b, keys.begin() + c,
                 merged.begin() + a, less);
      next.push_back(c);
    }
    keys.swap(merged);
    bounds.swap(next);
  }
}

// Row order by (start asc, end desc): an enclosing range sorts before what it encloses.
std::vector<uint32_t> StartOrder(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                                 bool* already_sorted) {
  const size_t n = start.size();
  *already_sorted = true;
  for (size_t i = 1; i < n; ++i) {
    if (start[i] < start[i - 1] || (start[i] == start[i - 1] && end[i] > end[i - 1])) {
      *already_sorted = false;
      break;
    }
  }
  std::vector<uint32_t> perm;
  if (*already_sorted) return perm;
  // The keys are sorted next to the row numbers, not through them: an indirect sort reads two
  // columns at random rows for every comparison.
  struct Key {
    TimeNs start, end;
    uint32_t row;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = Key{start[i], end[i], static_cast<uint32_t>(i)};
  auto less = [](const Key& a, const Key& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.row < b.row;
  };
  SortMostlySorted(keys, less);
  perm.resize(n);
  for (size_t i = 0; i < n; ++i) perm[i] = keys[i].row;
  return perm;
}

}  // namespace

std::string_view StripApiVersionSuffix(std::string_view name) {
  // nsys names calls "cudaLaunchKernel_v7000"; real API names may end in "_v2", so only a suffix
  // of four or more digits is a version.
  const size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || name.size() - pos - 2 < 4) return name;
  for (size_t i = pos + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, pos);
}

std::string WholeGraphName(int64_t graph_id) {
  return "CUDA graph " + std::to_string(graph_id) + " (whole graph)";
}

bool IsWholeGraphName(std::string_view name) {
  return name.starts_with("CUDA graph ") && name.ends_with(" (whole graph)");
}

void NoteWholeGraphRuns(Diagnostics& diagnostics, int64_t runs) {
  if (runs > 0) diagnostics.Add(DiagCode::kWholeGraphRuns, runs);
}

std::string ShortKernelName(std::string_view full) {
  // Find the parameter list: the first '(' outside template brackets and braces. Names without one
  // (e.g. "ampere_sgemm_128x64_nn", Triton or Myelin kernels) are already short.
  int angle = 0, brace = 0;
  size_t params = std::string_view::npos;
  for (size_t i = 0; i < full.size(); ++i) {
    const char c = full[i];
    if (c == '<')
      ++angle;
    else if (c == '>' && angle > 0)
      --angle;
    else if (c == '{')
      ++brace;
    else if (c == '}' && brace > 0)
      --brace;
    else if (c == '(' && angle == 0 && brace == 0) {
      // "(anonymous namespace)::f" is part of the name, not a parameter list.
      if (full.substr(i).starts_with("(anonymous namespace)")) {
        i += std::string_view("(anonymous namespace)").size() - 1;
        continue;
      }
      params = i;
      break;
    }
  }
  std::string_view head = full.substr(0, params);
  // Drop template arguments at depth 0, keeping the rest.
  std::string base;
  base.reserve(head.size());
  angle = 0;
  for (char c : head) {
    if (c == '<') {
      ++angle;
      continue;
    }
    if (c == '>' && angle > 0) {
      --angle;
      continue;
    }
    if (angle == 0) base.push_back(c);
  }
  // Drop the return type ("void ") and the qualifiers: keep the last name component.
  const size_t space = base.rfind(' ');
  if (space != std::string::npos && params != std::string_view::npos) base = base.substr(space + 1);
  const size_t colons = base.rfind("::");
  if (colons != std::string::npos && colons + 2 < base.size()) base = base.substr(colons + 2);
  while (!base.empty() && base.back() == ' ') base.pop_back();
  if (base.empty()) return std::string(full);
  return base;
}

StringId TraceBuilder::InternCut(std::string_view s) {
  size_t keep = kMaxStringBytes;
  // Not inside a UTF-8 sequence: back up over continuation bytes (10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  trace_.diagnostics.Add(DiagCode::kStringCut);
  return trace_.strings.Intern(
      fmt::format("{}... [cut: {} bytes in all]", s.substr(0, keep), s.size()));
}

namespace {

// Removes the rows of `table` whose `keep` is 0 from every column filled row by row (a column
// filled later, such as range depth or launch links, is left alone); returns how many went.
template <typename Table>
size_t EraseRows(Table& table, const std::vector<uint8_t>& keep) {
  const size_t n = keep.size();
  const size_t kept = static_cast<size_t>(std::count(keep.begin(), keep.end(), uint8_t{1}));
  if (kept == n) return 0;
  table.ForEachColumn([&](auto& column) {
    if (column.size() != n) return;
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
      if (keep[i]) column[out++] = std::move(column[i]);
    }
    column.resize(out);
  });
  return n - kept;
}

// Calls f(table, name) for every table of intervals (start, end) the time filters go over.
template <typename F>
void ForEachIntervalTable(Trace& t, F&& f) {
  f(t.kernels, "kernels");
  f(t.memops, "memory operations");
  f(t.api_calls, "API calls");
  f(t.ranges, "ranges");
  f(t.gil, "GIL intervals");
  f(t.os_calls, "OS calls");
  f(t.off_cpu, "off-CPU intervals");
  f(t.collectives, "collectives");
}

// Calls f(table, name) for every table of instants (time_ns) the time filters go over.
template <typename F>
void ForEachPointTable(Trace& t, F&& f) {
  f(t.memory_events, "memory events");
  f(t.counters, "counter samples");
  f(t.py_samples, "Python samples");
  f(t.cpu_samples, "CPU samples");
}

}  // namespace

// Events more than 2^49 ns (6.5 days) from the median start time cannot be of the same capture:
// dropped (absurd_timestamp). With the rest within 2^50 ns of each other, no duration left after
// DropAbsurdDurations passes 2^52 ns, and sums of thousands of them stay inside int64.
void TraceBuilder::DropFarTimes() {
  constexpr TimeNs kMaxFromMedianNs = TimeNs{1} << 49;
  constexpr TimeNs kMaxAbsNs = TimeNs{1} << 62;  // as CheckDuration's
  constexpr size_t kSamples = 1 << 16;           // the median of an even sample of the start times
  int64_t dropped = 0;
  // Instants (memory events, samples) are not checked as they are added: those beyond +-2^62
  // go first, so that every difference below fits.
  ForEachPointTable(trace_, [&](auto& table, std::string_view) {
    std::vector<uint8_t> keep(table.time_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) {
      keep[i] = table.time_ns[i] > -kMaxAbsNs && table.time_ns[i] < kMaxAbsNs;
    }
    dropped += static_cast<int64_t>(EraseRows(table, keep));
  });
  size_t total = 0;
  ForEachIntervalTable(trace_,
                       [&](auto& table, std::string_view) { total += table.start_ns.size(); });
  if (total == 0) {
    if (dropped > 0) {
      trace_.diagnostics.Add(DiagCode::kAbsurdTimestamp, dropped, "beyond +-2^62 ns");
    }
    return;
  }
  const size_t step = std::max<size_t>(1, total / kSamples);
  std::vector<TimeNs> sample;
  size_t seen = 0;
  ForEachIntervalTable(trace_, [&](auto& table, std::string_view) {
    for (TimeNs t : table.start_ns) {
      if (seen++ % step == 0) sample.push_back(t);
    }
  });
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2),
                   sample.end());
  const TimeNs median = sample[sample.size() / 2];
  ForEachIntervalTable(trace_, [&](auto& table, std::string_view) {
    std::vector<uint8_t> keep(table.start_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) {
      // Times are within +-2^62 (CheckDuration): these differences fit.
      keep[i] = std::abs(table.start_ns[i] - median) <= kMaxFromMedianNs &&
                std::abs(table.end_ns[i] - median) <= 4 * kMaxFromMedianNs;
    }
    dropped += static_cast<int64_t>(EraseRows(table, keep));
  });
  ForEachPointTable(trace_, [&](auto& table, std::string_view) {
    std::vector<uint8_t> keep(table.time_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) {
      keep[i] = std::abs(table.time_ns[i] - median) <= 4 * kMaxFromMedianNs;
    }
    dropped += static_cast<int64_t>(EraseRows(table, keep));
  });
  // A capture time far off is unknown (-1), not a reason to drop the kernel.
  KernelTable& k = trace_.kernels;
  for (size_t i = 0; i < k.capture_ns.size(); ++i) {
    if (k.capture_ns[i] == -1) continue;
    if (k.capture_ns[i] <= -kMaxAbsNs || k.capture_ns[i] >= kMaxAbsNs ||
        std::abs(k.capture_ns[i] - median) > 4 * kMaxFromMedianNs) {
      k.capture_ns[i] = -1;
      ++dropped;
    }
  }
  if (dropped > 0) {
    trace_.diagnostics.Add(DiagCode::kAbsurdTimestamp, dropped,
                           "beyond +-2^62 ns or far from the median start time (starts: 2^49 "
                           "ns, 6.5 days; ends, instants and capture times: 2^51 ns)");
  }
}

void TraceBuilder::DropAbsurdDurations() {
  // The span of all start times, in unsigned arithmetic (no overflow for any pair of int64s).
  uint64_t lo = UINT64_MAX, hi = 0;
  ForEachIntervalTable(trace_, [&](auto& table, std::string_view) {
    for (TimeNs t : table.start_ns) {
      const uint64_t u = static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);  // order-preserving
      lo = std::min(lo, u);
      hi = std::max(hi, u);
    }
  });
  if (lo > hi) return;
  constexpr uint64_t kSlackNs = 60'000'000'000;  // a minute: traces of a few events
  const uint64_t span = hi - lo;
  const uint64_t limit = span > (UINT64_MAX - kSlackNs) / 2 ? UINT64_MAX : 2 * span + kSlackNs;
  std::string tables;
  int64_t dropped = 0;
  ForEachIntervalTable(trace_, [&](auto& table, std::string_view name) {
    std::vector<uint8_t> keep(table.start_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) {
      // end >= start here (CheckDuration), so the unsigned difference is the duration.
      keep[i] = static_cast<uint64_t>(table.end_ns[i]) - static_cast<uint64_t>(table.start_ns[i]) <=
                limit;
    }
    const size_t bad = EraseRows(table, keep);
    if (bad == 0) return;
    dropped += static_cast<int64_t>(bad);
    tables += fmt::format("{}{} {}", tables.empty() ? "" : ", ", bad, name);
  });
  if (dropped > 0) {
    trace_.diagnostics.Add(
        DiagCode::kAbsurdDuration, dropped,
        fmt::format("{}; longer than {:.3f} s, twice the {:.3f} s spanned by all start times "
                    "plus a minute",
                    tables, static_cast<double>(limit) / 1e9, static_cast<double>(span) / 1e9));
  }
}

bool TraceBuilder::CheckDuration(TimeNs start, TimeNs end) {
  // Times within +-2^62 ns keep every difference of two of them (the trace's span, a gap, a
  // bucket edge) inside int64.
  constexpr TimeNs kMaxAbsNs = TimeNs{1} << 62;
  if (start <= -kMaxAbsNs || start >= kMaxAbsNs || end <= -kMaxAbsNs || end >= kMaxAbsNs) {
    trace_.diagnostics.Add(DiagCode::kAbsurdTimestamp);
    return false;
  }
  if (end < start) {
    trace_.diagnostics.Add(DiagCode::kNegativeDuration);
    return false;
  }
  // A duration that does not fit in int64 ns (a start near INT64_MIN, an end near INT64_MAX)
  // cannot be real, and every end - start computed later would overflow into a negative time.
  TimeNs duration;
  if (__builtin_sub_overflow(end, start, &duration)) {
    trace_.diagnostics.Add(DiagCode::kAbsurdDuration, 1, "longer than 2^63 ns");
    return false;
  }
  return true;
}

void TraceBuilder::Reserve(size_t kernels, size_t memops, size_t api_calls, size_t ranges) {
  trace_.kernels.ForEachColumn([&](auto& column) { column.reserve(kernels); });
  trace_.memops.ForEachColumn([&](auto& column) { column.reserve(memops); });
  trace_.api_calls.ForEachColumn([&](auto& column) { column.reserve(api_calls); });
  trace_.ranges.ForEachColumn([&](auto& column) { column.reserve(ranges); });
}

void TraceBuilder::AddKernel(const KernelRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  KernelTable& k = trace_.kernels;
  k.start_ns.push_back(row.start_ns);
  k.end_ns.push_back(row.end_ns);
  k.device.push_back(row.device);
  k.stream.push_back(row.stream);
  k.pid.push_back(row.pid);
  k.name.push_back(row.name);
  StringId short_name = row.short_name;
  if (short_name.value == 0 && row.name.value != 0) {
    // Short names are derived once per distinct full name.
    if (row.name.value >= short_name_cache_.size()) short_name_cache_.resize(row.name.value + 1);
    StringId& cached = short_name_cache_[row.name.value];
    if (cached.value == 0) cached = Intern(ShortKernelName(trace_.strings.Get(row.name)));
    short_name = cached;
  }
  k.short_name.push_back(short_name);
  k.correlation.push_back(row.correlation);
  k.grid.push_back(row.grid);
  k.block.push_back(row.block);
  k.registers_per_thread.push_back(row.registers_per_thread);
  k.static_smem_bytes.push_back(row.static_smem_bytes);
  k.dynamic_smem_bytes.push_back(row.dynamic_smem_bytes);
  k.launch_call.push_back(kNoRow);
  k.graph_node.push_back(row.graph_node);
  k.capture_node.push_back(row.capture_node);
  k.capture_ns.push_back(row.capture_ns);
  k.capture_pid.push_back(row.capture_pid);
  k.capture_tid.push_back(row.capture_tid);
}

void TraceBuilder::AddMemOp(const MemOpRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  // No copy or set moves a petabyte; sums of real sizes then stay far inside int64.
  constexpr int64_t kMaxBytes = int64_t{1} << 50;
  if (row.size_bytes < -1 || row.size_bytes > kMaxBytes) {
    trace_.diagnostics.Add(DiagCode::kAbsurdSize);
    return;
  }
  MemOpTable& m = trace_.memops;
  m.start_ns.push_back(row.start_ns);
  m.end_ns.push_back(row.end_ns);
  m.device.push_back(row.device);
  m.stream.push_back(row.stream);
  m.pid.push_back(row.pid);
  m.kind.push_back(row.kind);
  m.src_kind.push_back(row.src_kind);
  m.dst_kind.push_back(row.dst_kind);
  m.size_bytes.push_back(row.size_bytes);
  m.correlation.push_back(row.correlation);
  m.launch_call.push_back(kNoRow);
}

void TraceBuilder::AddApiCall(const ApiCallRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  ApiCallTable& a = trace_.api_calls;
  const std::string_view name = StripApiVersionSuffix(row.name);
  StringId id = Intern(name);
  if (id.value >= api_class_cache_.size()) api_class_cache_.resize(id.value + 1, 0xff);
  uint8_t& cls = api_class_cache_[id.value];
  if (cls == 0xff) cls = static_cast<uint8_t>(ClassifyApiName(name));
  a.start_ns.push_back(row.start_ns);
  a.end_ns.push_back(row.end_ns);
  a.pid.push_back(row.pid);
  a.tid.push_back(row.tid);
  a.name.push_back(id);
  a.kind.push_back(row.kind);
  a.api_class.push_back(static_cast<ApiClass>(cls));
  a.correlation.push_back(row.correlation);
}

void TraceBuilder::AddRange(const RangeRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  RangeTable& r = trace_.ranges;
  r.start_ns.push_back(row.start_ns);
  r.end_ns.push_back(row.end_ns);
  r.pid.push_back(row.pid);
  r.tid.push_back(row.tid);
  r.name.push_back(row.name);
  r.domain.push_back(row.domain);
  r.kind.push_back(row.kind);
}

void TraceBuilder::AddGil(const GilRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  GilTable& g = trace_.gil;
  g.start_ns.push_back(row.start_ns);
  g.end_ns.push_back(row.end_ns);
  g.pid.push_back(row.pid);
  g.tid.push_back(row.tid);
  g.state.push_back(row.state);
}

void TraceBuilder::AddOsCall(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid,
                             StringId name, const std::vector<StringId>& chain) {
  if (!CheckDuration(start_ns, end_ns)) return;
  OsCallTable& o = trace_.os_calls;
  o.start_ns.push_back(start_ns);
  o.end_ns.push_back(end_ns);
  o.pid.push_back(pid);
  o.tid.push_back(tid);
  o.name.push_back(name);
  o.first_frame.push_back(static_cast<int64_t>(o.frames.size()));
  o.frame_count.push_back(static_cast<int32_t>(chain.size()));
  o.frames.insert(o.frames.end(), chain.begin(), chain.end());
}

void TraceBuilder::AddCollective(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid,
                                 StringId communicator, StringId name, int64_t seq) {
  if (!CheckDuration(start_ns, end_ns)) return;
  CollectiveTable& c = trace_.collectives;
  c.start_ns.push_back(start_ns);
  c.end_ns.push_back(end_ns);
  c.pid.push_back(pid);
  c.tid.push_back(tid);
  c.communicator.push_back(communicator);
  c.name.push_back(name);
  c.seq.push_back(seq);
}

void TraceBuilder::AddOffCpu(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid) {
  if (!CheckDuration(start_ns, end_ns)) return;
  OffCpuTable& o = trace_.off_cpu;
  o.start_ns.push_back(start_ns);
  o.end_ns.push_back(end_ns);
  o.pid.push_back(pid);
  o.tid.push_back(tid);
}

namespace {

void AddStackSample(StackSampleTable& p, TimeNs time_ns, int32_t pid, int32_t tid,
                    const std::vector<StringId>& stack) {
  p.time_ns.push_back(time_ns);
  p.pid.push_back(pid);
  p.tid.push_back(tid);
  p.first_frame.push_back(static_cast<int64_t>(p.frames.size()));
  p.frame_count.push_back(static_cast<int32_t>(stack.size()));
  p.frames.insert(p.frames.end(), stack.begin(), stack.end());
}

}  // namespace

void TraceBuilder::AddPySample(TimeNs time_ns, int32_t pid, int32_t tid,
                               const std::vector<StringId>& stack) {
  AddStackSample(trace_.py_samples, time_ns, pid, tid, stack);
}

void TraceBuilder::AddCpuSample(TimeNs time_ns, int32_t pid, int32_t tid,
                                const std::vector<StringId>& stack) {
  AddStackSample(trace_.cpu_samples, time_ns, pid, tid, stack);
}

void TraceBuilder::AddDevice(const DeviceInfo& device) {
  for (DeviceInfo& d : trace_.devices) {
    if (d.id == device.id) {
      d = device;
      return;
    }
  }
  trace_.devices.push_back(device);
}

void TraceBuilder::AddProcess(const ProcessInfo& process) {
  for (ProcessInfo& p : trace_.processes) {
    if (p.pid == process.pid) {
      if (!process.name.empty()) p.name = process.name;
      return;
    }
  }
  trace_.processes.push_back(process);
}

void TraceBuilder::AddThread(const ThreadInfo& thread) {
  for (ThreadInfo& t : trace_.threads) {
    if (t.pid == thread.pid && t.tid == thread.tid) {
      if (!thread.name.empty()) t.name = thread.name;
      return;
    }
  }
  trace_.threads.push_back(thread);
}

void TraceBuilder::SortTables() {
  // depth/parent of ranges are computed after sorting, so they are still empty here.
  auto sort_table = [](auto& table) {
    bool sorted;
    const std::vector<uint32_t> perm = StartOrder(table.start_ns, table.end_ns, &sorted);
    if (sorted) return;
    table.ForEachColumn([&](auto& column) {
      if (!column.empty()) Permute(column, perm);
    });
  };
  sort_table(trace_.kernels);
  sort_table(trace_.memops);
  sort_table(trace_.api_calls);
  sort_table(trace_.ranges);
  sort_table(trace_.gil);
  sort_table(trace_.os_calls);
  sort_table(trace_.off_cpu);
  sort_table(trace_.collectives);
  // Samples and memory events: by time, ties in arrival order.
  auto sort_by_time = [](auto& table) {
    if (std::is_sorted(table.time_ns.begin(), table.time_ns.end())) return;
    std::vector<uint32_t> perm(table.size());
    for (uint32_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::stable_sort(perm.begin(), perm.end(),
                     [&](uint32_t x, uint32_t y) { return table.time_ns[x] < table.time_ns[y]; });
    table.ForEachColumn([&](auto& column) { Permute(column, perm); });
  };
  sort_by_time(trace_.counters);
  sort_by_time(trace_.memory_events);
  sort_by_time(trace_.py_samples);
  sort_by_time(trace_.cpu_samples);
  std::sort(trace_.devices.begin(), trace_.devices.end(),
            [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
  std::sort(trace_.processes.begin(), trace_.processes.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });
  std::sort(trace_.threads.begin(), trace_.threads.end(),
            [](const ThreadInfo& a, const ThreadInfo& b) {
              return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
            });
}

void TraceBuilder::LinkLaunches() {
  const ApiCallTable& a = trace_.api_calls;
  // The calls with a correlation id, ordered by (correlation, pid, row). The table is in start
  // order, and profilers hand out correlation ids in call order, so it is that order already, or
  // nearly (SortMostlySorted).
  std::vector<int32_t> rows;
  rows.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.correlation[i] >= 0) rows.push_back(static_cast<int32_t>(i));
  }
  auto row_less = [&a](int32_t x, int32_t y) {
    if (a.correlation[x] != a.correlation[y]) return a.correlation[x] < a.correlation[y];
    if (a.pid[x] != a.pid[y]) return a.pid[x] < a.pid[y];
    return x < y;
  };
  SortMostlySorted(rows, row_less);
  const size_t n = rows.size();
  auto corr = [&](size_t i) { return a.correlation[rows[i]]; };

  // The first position in `rows` whose correlation is >= c. GPU work comes in start order and
  // its correlation ids mostly grow, so the search gallops from the previous answer instead of
  // bisecting all rows (the same position as std::lower_bound, found in a few steps).
  size_t hint = 0;
  auto lower_bound = [&](int64_t c) {
    if (n == 0) return size_t{0};
    size_t lo, hi;  // the answer is in [lo, hi]
    if (corr(hint) < c) {
      size_t step = 1;
      while (hint + step < n && corr(hint + step) < c) step *= 2;
      lo = hint + step / 2 + 1;
      hi = std::min(hint + step, n);
    } else {
      size_t step = 1;
      while (step <= hint && corr(hint - step) >= c) step *= 2;
      lo = step <= hint ? hint - step + 1 : 0;
      hi = hint - step / 2;
    }
    const size_t at = static_cast<size_t>(
        std::lower_bound(rows.begin() + lo, rows.begin() + hi, c,
                         [&a](int32_t row, int64_t v) { return a.correlation[row] < v; }) -
        rows.begin());
    hint = std::min(at, n - 1);
    return at;
  };

  // Finds the launching call for (correlation, pid); pid -1 (unknown, as in Kineto GPU events)
  // matches when every call with that correlation id comes from one process.
  int64_t ambiguous = 0;
  auto find = [&](int64_t correlation, int32_t pid) -> int32_t {
    if (correlation < 0) return kNoRow;
    size_t lo = lower_bound(correlation);
    if (lo == n || corr(lo) != correlation) return kNoRow;
    if (pid >= 0) {
      for (size_t i = lo; i < n && corr(i) == correlation; ++i) {
        if (a.pid[rows[i]] == pid) return rows[i];
      }
      return kNoRow;
    }
    if (lo + 1 < n && corr(lo + 1) == correlation && a.pid[rows[lo + 1]] != a.pid[rows[lo]]) {
      ++ambiguous;
      return kNoRow;
    }
    return rows[lo];
  };

  int64_t unlinked_kernels = 0, unlinked_memops = 0;
  KernelTable& k = trace_.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t row = find(k.correlation[i], k.pid[i]);
    k.launch_call[i] = row;
    if (row == kNoRow) {
      ++unlinked_kernels;
    } else if (k.pid[i] < 0) {
      k.pid[i] = a.pid[row];
    }
  }
  // One launch call starts one kernel, but for a CUDA graph's launch: more kernels on one call
  // mean repeated correlation ids (a broken or edited trace), and are counted.
  int64_t shared_launch = 0;
  {
    std::vector<uint8_t> claimed(a.size(), 0);
    for (size_t i = 0; i < k.size(); ++i) {
      const int32_t row = k.launch_call[i];
      if (row == kNoRow) continue;
      // cudaGraphLaunch / cuGraphLaunch class as launches; a graph's kernels share its id.
      const size_t r = static_cast<size_t>(row);
      if (a.api_class[r] == ApiClass::kGraph ||
          trace_.strings.Get(a.name[r]).find("Graph") != std::string_view::npos) {
        continue;
      }
      if (claimed[static_cast<size_t>(row)]) {
        ++shared_launch;
      } else {
        claimed[static_cast<size_t>(row)] = 1;
      }
    }
  }
  MemOpTable& m = trace_.memops;
  for (size_t i = 0; i < m.size(); ++i) {
    const int32_t row = find(m.correlation[i], m.pid[i]);
    m.launch_call[i] = row;
    if (row == kNoRow) {
      ++unlinked_memops;
    } else if (m.pid[i] < 0) {
      m.pid[i] = a.pid[row];
    }
  }
  Diagnostics& d = trace_.diagnostics;
  d.Add(DiagCode::kKernelWithoutLaunch, unlinked_kernels);
  d.Add(DiagCode::kMemopWithoutLaunch, unlinked_memops);
  d.Add(DiagCode::kAmbiguousCorrelation, ambiguous);
  d.Add(DiagCode::kSharedLaunchCall, shared_launch);
  // Kernel launches and not one kernel: the GPU side was not read (a table renamed, or of a layout
  // this reader does not know); a GPU that looks idle would be a wrong conclusion.
  if (k.size() == 0) {
    int64_t launches = 0;
    for (size_t i = 0; i < a.size(); ++i) launches += a.api_class[i] == ApiClass::kLaunch;
    d.Add(DiagCode::kLaunchesWithoutKernels, launches);
  }
}

void TraceBuilder::ComputeRangeNesting() {
  RangeTable& r = trace_.ranges;
  r.depth.assign(r.size(), 0);
  r.parent.assign(r.size(), kNoRow);
  std::unordered_map<int64_t, std::vector<int32_t>> stacks;  // (pid, tid) -> open ranges
  int64_t crossing = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t key = (static_cast<int64_t>(r.pid[i]) << 32) ^ static_cast<uint32_t>(r.tid[i]);
    std::vector<int32_t>& stack = stacks[key];
    while (!stack.empty() && r.end_ns[stack.back()] <= r.start_ns[i]) stack.pop_back();
    if (!stack.empty() && r.end_ns[i] > r.end_ns[stack.back()]) {
      // Overlaps its predecessor without nesting (start/end ranges may do this): a sibling.
      ++crossing;
      r.parent[i] = r.parent[stack.back()];
      r.depth[i] = r.depth[stack.back()];
      continue;
    }
    if (!stack.empty()) {
      r.parent[i] = stack.back();
      r.depth[i] = r.depth[stack.back()] + 1;
    }
    stack.push_back(static_cast<int32_t>(i));
  }
  trace_.diagnostics.Add(DiagCode::kRangeNotNested, crossing);
}

void TraceBuilder::ComputeThreadRoles() {
  // Launching threads: those with a launch call. A launching thread that no importer listed stays
  // unlisted (AnalysisContext::LaunchingThreads finds every one from the calls).
  if (trace_.threads.empty()) return;
  std::vector<std::pair<int32_t, int32_t>> launching;
  const ApiCallTable& a = trace_.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.api_class[i] != ApiClass::kLaunch) continue;
    const std::pair<int32_t, int32_t> key{a.pid[i], a.tid[i]};
    if (launching.empty() || launching.back() != key) launching.push_back(key);  // runs of one
  }
  std::sort(launching.begin(), launching.end());
  launching.erase(std::unique(launching.begin(), launching.end()), launching.end());
  std::vector<ThreadInfo>& threads = trace_.threads;
  for (ThreadInfo& t : threads) {
    if (IsProfilerThreadName(t.name)) {
      t.role = ThreadRole::kProfiler;
    } else if (std::binary_search(launching.begin(), launching.end(),
                                  std::make_pair(t.pid, t.tid))) {
      t.role = ThreadRole::kLaunching;
    } else {
      t.role = ThreadRole::kOther;
    }
  }
}

void TraceBuilder::ComputeSpan() {
  TimeNs lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
    if (s.empty()) return;
    lo = std::min(lo, s.front());  // tables are sorted by start
    for (TimeNs t : e) hi = std::max(hi, t);
  };
  span(trace_.kernels.start_ns, trace_.kernels.end_ns);
  span(trace_.memops.start_ns, trace_.memops.end_ns);
  span(trace_.api_calls.start_ns, trace_.api_calls.end_ns);
  span(trace_.ranges.start_ns, trace_.ranges.end_ns);
  if (!trace_.gil.start_ns.empty()) {  // not sorted with the others: take the minimum too
    lo = std::min(lo, trace_.gil.start_ns.front());
    for (TimeNs t : trace_.gil.end_ns) hi = std::max(hi, t);
  }
  if (lo == INT64_MAX) lo = hi = 0;
  trace_.begin_ns_ = lo;
  trace_.end_ns_ = hi;
}

void TraceBuilder::AddMemoryEvent(const MemoryEventRow& row) {
  // As for copies (AddMemOp): no allocation, and no allocator's total, is a petabyte.
  constexpr int64_t kMaxBytes = int64_t{1} << 50;
  if (row.bytes < -kMaxBytes || row.bytes > kMaxBytes || row.total_allocated > kMaxBytes ||
      row.total_reserved > kMaxBytes || row.pool_size > kMaxBytes) {
    trace_.diagnostics.Add(DiagCode::kAbsurdSize);
    return;
  }
  MemoryEventTable& m = trace_.memory_events;
  m.time_ns.push_back(row.time_ns);
  m.device.push_back(row.device);
  m.pid.push_back(row.pid);
  m.tid.push_back(row.tid);
  m.total_allocated.push_back(row.total_allocated);
  m.total_reserved.push_back(row.total_reserved);
  m.bytes.push_back(row.bytes);
  m.address.push_back(row.address);
  m.kind.push_back(row.kind);
  m.correlation.push_back(row.correlation);
  m.name.push_back(row.name);
  m.pool.push_back(row.pool);
  m.pool_size.push_back(row.pool_size);
  m.source.push_back(row.source);
}

void TraceBuilder::AddCounter(TimeNs time_ns, int32_t device, StringId name, double value) {
  if (!std::isfinite(value)) {
    trace_.diagnostics.Add(DiagCode::kValueNotFinite);
    return;
  }
  CounterTable& c = trace_.counters;
  c.time_ns.push_back(time_ns);
  c.device.push_back(device);
  c.name.push_back(name);
  c.value.push_back(value);
}

Trace TraceBuilder::Finish() {
  DropFarTimes();
  DropAbsurdDurations();
  SortTables();
  LinkLaunches();
  ComputeRangeNesting();
  ComputeThreadRoles();
  ComputeSpan();
  Trace out = std::move(trace_);
  trace_ = Trace();
  short_name_cache_.clear();
  api_class_cache_.clear();
  return out;
}

}  // namespace sightline
