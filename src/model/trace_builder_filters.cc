// The time filters of TraceBuilder::Finish (trace_builder.h): events too far from the rest of the
// capture (DropFarTimes) and intervals longer than the trace can hold (DropAbsurdDurations).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/trace_builder.h"

namespace sightline {
namespace {

// Events more than 2^49 ns (6.5 days) from the median start time cannot be of the same capture.
constexpr TimeNs kMaxFromMedianNs = TimeNs{1} << 49;
constexpr TimeNs kMaxAbsNs = TimeNs{1} << 62;  // as CheckDuration's

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

// Drops the instants whose time passes `keep_time`; returns how many went.
template <typename Keep>
int64_t DropInstants(Trace& trace, const Keep& keep_time) {
  int64_t dropped = 0;
  ForEachPointTable(trace, [&](auto& table, std::string_view) {
    std::vector<uint8_t> keep(table.time_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = keep_time(table.time_ns[i]);
    dropped += static_cast<int64_t>(EraseRows(table, keep));
  });
  return dropped;
}

// The median of an even sample of the interval tables' start times into *median; false when
// there are none.
bool MedianStart(Trace& trace, TimeNs* median) {
  constexpr size_t kSamples = 1 << 16;
  size_t total = 0;
  ForEachIntervalTable(trace,
                       [&](auto& table, std::string_view) { total += table.start_ns.size(); });
  if (total == 0) return false;
  const size_t step = std::max<size_t>(1, total / kSamples);
  // Every step-th start time of the tables taken one after the other (rows 0, step, 2 step, ...
  // counted across the tables), visiting only those rows.
  std::vector<TimeNs> sample;
  sample.reserve(total / step + 1);
  size_t next = 0;   // the next sampled row, counted from the first table's first row
  size_t first = 0;  // this table's first row, counted alike
  ForEachIntervalTable(trace, [&](auto& table, std::string_view) {
    const size_t n = table.start_ns.size();
    for (; next < first + n; next += step) sample.push_back(table.start_ns[next - first]);
    first += n;
  });
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2),
                   sample.end());
  *median = sample[sample.size() / 2];
  return true;
}

// Drops intervals that start more than kMaxFromMedianNs, or end more than four times that, from
// `median`; returns how many went.
int64_t DropIntervalsFarFrom(Trace& trace, TimeNs median) {
  int64_t dropped = 0;
  ForEachIntervalTable(trace, [&](auto& table, std::string_view) {
    std::vector<uint8_t> keep(table.start_ns.size(), 1);
    for (size_t i = 0; i < keep.size(); ++i) {
      // Times are within +-2^62 (CheckDuration): these differences fit.
      keep[i] = std::abs(table.start_ns[i] - median) <= kMaxFromMedianNs &&
                std::abs(table.end_ns[i] - median) <= 4 * kMaxFromMedianNs;
    }
    dropped += static_cast<int64_t>(EraseRows(table, keep));
  });
  return dropped;
}

// A capture time far off is unknown (-1), not a reason to drop the kernel; returns how many.
int64_t ForgetFarCaptureTimes(KernelTable& k, TimeNs median) {
  int64_t forgotten = 0;
  for (size_t i = 0; i < k.capture_ns.size(); ++i) {
    if (k.capture_ns[i] == -1) continue;
    if (k.capture_ns[i] <= -kMaxAbsNs || k.capture_ns[i] >= kMaxAbsNs ||
        std::abs(k.capture_ns[i] - median) > 4 * kMaxFromMedianNs) {
      k.capture_ns[i] = -1;
      ++forgotten;
    }
  }
  return forgotten;
}

}  // namespace

// Events more than 2^49 ns (6.5 days) from the median start time cannot be of the same capture:
// dropped (absurd_timestamp). With the rest within 2^50 ns of each other, no duration left after
// DropAbsurdDurations passes 2^52 ns, and sums of thousands of them stay inside int64.
void TraceBuilder::DropFarTimes() {
  // Instants (memory events, samples) are not checked as they are added: those beyond +-2^62
  // go first, so that every difference below fits.
  int64_t dropped = DropInstants(trace_, [](TimeNs t) { return t > -kMaxAbsNs && t < kMaxAbsNs; });
  TimeNs median = 0;
  if (!MedianStart(trace_, &median)) {
    if (dropped > 0) {
      trace_.diagnostics.Add(DiagCode::kAbsurdTimestamp, dropped, "beyond +-2^62 ns");
    }
    return;
  }
  dropped += DropIntervalsFarFrom(trace_, median);
  dropped += DropInstants(
      trace_, [median](TimeNs t) { return std::abs(t - median) <= 4 * kMaxFromMedianNs; });
  dropped += ForgetFarCaptureTimes(trace_.kernels, median);
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

}  // namespace sightline
