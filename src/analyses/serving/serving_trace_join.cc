#include "analyses/serving/serving_trace_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <utility>

#include "analyses/iteration_log/iteration_log_join.h"
#include "base/byte_codec.h"
#include "base/stats.h"
#include "base/time_units.h"
#include "facts/intervals.h"
#include "facts/iterations.h"

namespace sightline {

ServingTraceJoin JoinTokenGapsToTrace(AnalysisContext& context, const RequestResults& results,
                                      const ServingMetrics& metrics) {
  const double itl_p99_ns = metrics.itl.p99_ns;
  ServingTraceJoin j;
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr) {
    j.note =
        "the trace has no iteration ranges, so the request log's token gaps cannot be joined "
        "to it (ranges named with the counter, e.g. \"iteration 12\", are needed)";
    return j;
  }
  const Trace& trace = context.trace();
  std::map<int64_t, const Iteration*> by_counter;
  for (const Iteration& it : set->iterations) {
    int64_t counter = 0;
    if (IterationNumber(trace.str(it.name), &counter)) by_counter[counter] = &it;
  }
  if (by_counter.empty()) {
    j.note = "the trace's iteration ranges carry no counter in their names; token gaps not joined";
    return j;
  }
  const std::vector<Interval>& gc = context.host().GcIntervals(set->pid);
  // Each chunk: when it was emitted (request log clock, ns) and in which iteration.
  struct Chunk {
    double t_ns;
    const Iteration* it;  // null when the trace lacks that iteration
  };
  std::vector<std::vector<Chunk>> chunks;  // per usable request
  std::vector<const RequestRecord*> used;
  // The request log's clock against the trace's: every chunk was emitted inside its iteration, so
  // start(it) <= t + offset <= end(it) for each; the offsets that satisfy all of them form
  // [lo, hi].
  double lo = -INFINITY, hi = INFINITY;
  for (const RequestRecord& q : results.requests) {
    if (!q.success || q.chunk_iterations.size() != q.itl_s.size() + 1) continue;
    std::vector<Chunk>& c = chunks.emplace_back();
    used.push_back(&q);
    double t = (q.start_s + q.ttft_s) * 1e9;
    for (size_t i = 0; i < q.chunk_iterations.size(); ++i) {
      if (i > 0) t += q.itl_s[i - 1] * 1e9;
      auto found = by_counter.find(q.chunk_iterations[i]);
      const Iteration* it = found == by_counter.end() ? nullptr : found->second;
      c.push_back({t, it});
      if (it != nullptr) {
        lo = std::max(lo, static_cast<double>(it->start_ns) - t);
        hi = std::min(hi, static_cast<double>(it->end_ns) - t);
      }
    }
  }
  j.clock_joined = results.has_start_times && lo <= hi;
  j.offset_uncertainty_ns = j.clock_joined ? (hi - lo) / 2 : 0;
  const double offset = j.clock_joined ? (lo + hi) / 2 : 0;
  if (j.clock_joined) {  // TTFT: from arrival to the first chunk, on the trace's clock
    for (size_t k = 0; k < chunks.size(); ++k) {
      const RequestRecord& q = *used[k];
      if (q.ttft_s * 1e9 < metrics.ttft.p90_ns || chunks[k].empty()) continue;
      const auto from = static_cast<TimeNs>(q.start_s * 1e9 + offset);
      const auto to = static_cast<TimeNs>(chunks[k][0].t_ns + offset);
      const double gc_ns = to > from ? static_cast<double>(BusyWithin(gc, from, to)) : 0;
      ++j.ttft_tail_requests;
      j.ttft_tail_with_gc += gc_ns > 0 && gc_ns >= 0.1 * q.ttft_s * 1e9;
      j.ttft_gc_in_tail_ns += gc_ns;
    }
  }
  // The union of the set's devices' GPU busy time, for host stalls.
  std::vector<Interval> busy;
  for (int32_t d : set->devices) {
    const std::vector<Interval>& b = context.gpu().Busy(d);
    busy.insert(busy.end(), b.begin(), b.end());
  }
  busy = MergeIntervals(std::move(busy));
  struct Gap {
    double ns;
    double gc_ns;
    double idle_ns = -1;  // GPU idle inside the gap; -1 unknown (counter join)
  };
  std::vector<Gap> gaps;
  for (size_t k = 0; k < chunks.size(); ++k) {
    const RequestRecord& q = *used[k];
    for (size_t i = 0; i < q.itl_s.size(); ++i) {
      ++j.gaps;
      const Chunk& a = chunks[k][i];
      const Chunk& b = chunks[k][i + 1];
      if (a.it == nullptr || b.it == nullptr) continue;
      TimeNs from = 0, to = 0;
      if (j.clock_joined) {  // the gap itself, on the trace's clock
        from = static_cast<TimeNs>(a.t_ns + offset);
        to = static_cast<TimeNs>(b.t_ns + offset);
      } else {  // by counter alone: the iterations that emitted the two chunks, whole
        from = a.it->start_ns;
        to = b.it->end_ns;
      }
      if (to <= from) continue;
      ++j.matched;
      gaps.push_back(
          {q.itl_s[i] * 1e9, static_cast<double>(BusyWithin(gc, from, to)),
           j.clock_joined ? static_cast<double>((to - from) - BusyWithin(busy, from, to)) : -1.0});
    }
  }
  if (gaps.empty()) {
    j.note = fmt::format(
        "none of the request log's {} token gaps fell between iterations of the trace (the "
        "trace covers other iterations than the log?)",
        j.gaps);
    return j;
  }
  j.joined = true;
  std::vector<double> all;
  for (const Gap& g : gaps) all.push_back(g.ns);
  j.typical_ns = Median(all);
  std::vector<double> with, without;
  for (const Gap& g : gaps) {
    const bool has_gc = g.gc_ns > 0 && g.gc_ns >= 0.5 * j.typical_ns;
    (has_gc ? with : without).push_back(g.ns);
    if (has_gc) j.excess_ns += std::min(g.gc_ns, std::max(0.0, g.ns - j.typical_ns));
    if (g.ns >= itl_p99_ns) {
      ++j.tail_gaps;
      j.tail_gaps_with_gc += has_gc;
      j.gc_in_tail_ns += g.gc_ns;
      j.tail_gaps_host_stall += !has_gc && g.idle_ns > 0.5 * g.ns;
    }
  }
  j.with_gc = ComputeLatencyStats(with);
  j.without_gc = ComputeLatencyStats(without);
  if (j.matched < j.gaps) {
    j.note = fmt::format(
        "{} of {} token gaps fall between iterations of the trace; the others "
        "lie outside what it recorded",
        j.matched, j.gaps);
  }
  return j;
}

void AddServingTraceJoin(const ServingTraceJoin& j, Section& s) {
  if (!j.joined) {
    if (!j.note.empty()) s.notes.push_back(j.note);
    return;
  }
  s.AddFact("gaps_joined_to_trace", "ITL gaps joined to the trace (by iteration)",
            fmt::format("{} of {}", j.matched, j.gaps));
  Table& t = s.AddTable("itl_by_gc", "ITL gaps during which the trace shows garbage collection",
                        {{"gaps", "Gaps", Unit::kText},
                         {"n", "N", Unit::kCount},
                         {"p50_ns", "P50", Unit::kDurationNs},
                         {"p90_ns", "P90", Unit::kDurationNs},
                         {"p99_ns", "P99", Unit::kDurationNs},
                         {"max_ns", "Max", Unit::kDurationNs}});
  for (const auto& [name, l] : {std::pair<const char*, const LatencyStats*>{"with GC", &j.with_gc},
                                {"without GC", &j.without_gc}}) {
    t.rows.push_back({std::string(name), l->n, l->p50_ns, l->p90_ns, l->p99_ns, l->max_ns});
  }
  t.note = fmt::format(
      "{}; \"with GC\" = the serving process's GC ranges cover at least half a typical gap ({}) "
      "of it; {} of the {} gaps at or above the ITL p99 are with GC",
      j.clock_joined
          ? fmt::format("joined by time: the request log's clock placed on the trace's by the "
                        "iteration each chunk came out in (within +/- {})",
                        FormatDuration(static_cast<DurationNs>(j.offset_uncertainty_ns)))
          : std::string("joined by the iteration counter only (the chunks' times do not fit "
                        "inside their iterations): a gap covers the whole iterations that emitted "
                        "its two chunks"),
      FormatDuration(static_cast<DurationNs>(0.5 * j.typical_ns)), j.tail_gaps_with_gc,
      j.tail_gaps);
  if (j.clock_joined) {
    s.AddFact("tail_gaps_host_stall", "ITL tail gaps without GC, GPU idle over half the gap",
              fmt::format("{} of {}", j.tail_gaps_host_stall, j.tail_gaps - j.tail_gaps_with_gc));
  }
  if (j.ttft_tail_requests > 0) {
    s.AddFact("ttft_tail_with_gc", "TTFT tail (>= p90) with GC in it",
              fmt::format("{} of {} ({} of GC)", j.ttft_tail_with_gc, j.ttft_tail_requests,
                          FormatDuration(static_cast<DurationNs>(j.ttft_gc_in_tail_ns))));
  }
  if (!j.note.empty()) s.notes.push_back(j.note);
}

namespace {

// One field list for both directions, in declaration order: `io` writes or reads one field (the
// two lambdas below), so the encoder and the decoder cannot disagree.
template <typename Io>
void JoinFields(ServingTraceJoin& j, Io&& io) {
  io(j.joined);
  io(j.note);
  io(j.gaps);
  io(j.matched);
  io(j.clock_joined);
  io(j.offset_uncertainty_ns);
  io(j.typical_ns);
  for (LatencyStats* s : {&j.with_gc, &j.without_gc}) {
    io(s->n);
    for (double* d : {&s->mean_ns, &s->std_ns, &s->min_ns, &s->max_ns, &s->p50_ns, &s->p90_ns,
                      &s->p95_ns, &s->p99_ns, &s->p999_ns}) {
      io(*d);
    }
  }
  io(j.tail_gaps);
  io(j.tail_gaps_with_gc);
  io(j.gc_in_tail_ns);
  io(j.tail_gaps_host_stall);
  io(j.excess_ns);
  io(j.ttft_tail_requests);
  io(j.ttft_tail_with_gc);
  io(j.ttft_gc_in_tail_ns);
}

// "SJN1": the serving trace join, version 1.
constexpr uint32_t kServingJoinMagic = 0x534a4e31;

}  // namespace

std::string EncodeServingTraceJoin(const ServingTraceJoin& join) {
  ByteWriter w;
  w.Put(kServingJoinMagic);
  ServingTraceJoin j = join;
  JoinFields(j, [&w](auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string>) {
      w.PutString(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      w.Put<uint8_t>(v ? 1 : 0);
    } else {
      w.Put(v);
    }
  });
  return std::move(w.bytes());
}

StatusOr<ServingTraceJoin> DecodeServingTraceJoin(std::string_view blob) {
  ByteReader r(blob);
  if (r.Get<uint32_t>() != kServingJoinMagic) r.Fail();
  ServingTraceJoin j;
  JoinFields(j, [&r](auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string>) {
      v = r.GetString();
    } else if constexpr (std::is_same_v<T, bool>) {
      const uint8_t b = r.Get<uint8_t>();
      if (b > 1) r.Fail();
      v = b == 1;
    } else {
      v = r.Get<T>();
    }
  });
  RETURN_IF_ERROR(r.Finish("serving trace join"));
  return j;
}

}  // namespace sightline
