// Streaming interval unions for the sweeps of the idle-gap and iteration analyses: the union of a
// start-sorted stream of intervals, produced one merged interval at a time, and its coverage of
// increasing queries. Same definition of "busy" as intervals.h (overlapping or touching intervals
// merge), but nothing is materialized: traces of 10^7 events are read once, with O(1) memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "facts/intervals.h"
#include "model/trace.h"

namespace sightline {

// Source: bool Next(TimeNs* start, TimeNs* end), intervals in non-decreasing start order.
template <typename Source>
class StreamingUnion {
 public:
  explicit StreamingUnion(Source source) : source_(std::move(source)) {}

  // The next disjoint interval of the union; false at the end.
  bool Next(Interval* out) {
    TimeNs s, e;
    if (has_pending_) {
      s = pending_.start_ns;
      e = pending_.end_ns;
      has_pending_ = false;
    } else if (!NextNonEmpty(&s, &e)) {
      return false;
    }
    out->start_ns = s;
    out->end_ns = e;
    while (NextNonEmpty(&s, &e)) {
      if (s <= out->end_ns) {
        out->end_ns = std::max(out->end_ns, e);
      } else {
        pending_ = {s, e};
        has_pending_ = true;
        break;
      }
    }
    return true;
  }

 private:
  bool NextNonEmpty(TimeNs* s, TimeNs* e) {
    while (source_.Next(s, e)) {
      if (*e > *s) return true;
    }
    return false;
  }

  Source source_;
  Interval pending_;
  bool has_pending_ = false;
};

// How much of each query [a, b) the union covers. Queries must not go back: each a must be at or
// after the previous b. Amortized O(1) per query plus one pass over the source.
template <typename Source>
class StreamingCoverage {
 public:
  explicit StreamingCoverage(Source source) : union_(std::move(source)) {
    valid_ = union_.Next(&cur_);
  }

  // Sets *covers_a (when given) to whether the union contains the point a itself.
  DurationNs Covered(TimeNs a, TimeNs b, bool* covers_a = nullptr) {
    DurationNs covered = 0;
    while (valid_ && cur_.end_ns <= a) valid_ = union_.Next(&cur_);
    if (covers_a != nullptr) *covers_a = valid_ && cur_.start_ns <= a;
    while (valid_) {
      if (cur_.start_ns >= b) break;
      covered += std::min(cur_.end_ns, b) - std::max(cur_.start_ns, a);
      if (cur_.end_ns > b) break;  // may reach into the next query
      valid_ = union_.Next(&cur_);
    }
    return covered;
  }

 private:
  StreamingUnion<Source> union_;
  Interval cur_;
  bool valid_ = false;
};

// The kernels and memory operations of the devices `accept(device)` admits, in start order.
template <typename Accept>
class GpuWorkSource {
 public:
  GpuWorkSource(const Trace& trace, Accept accept) : trace_(&trace), accept_(std::move(accept)) {}

  bool Next(TimeNs* s, TimeNs* e) {
    const KernelTable& k = trace_->kernels;
    const MemOpTable& m = trace_->memops;
    while (ki_ < k.size() && !accept_(k.device[ki_])) ++ki_;
    while (mi_ < m.size() && !accept_(m.device[mi_])) ++mi_;
    if (ki_ < k.size() && (mi_ == m.size() || k.start_ns[ki_] <= m.start_ns[mi_])) {
      *s = k.start_ns[ki_];
      *e = k.end_ns[ki_];
      ++ki_;
      return true;
    }
    if (mi_ < m.size()) {
      *s = m.start_ns[mi_];
      *e = m.end_ns[mi_];
      ++mi_;
      return true;
    }
    return false;
  }

 private:
  const Trace* trace_;
  Accept accept_;
  size_t ki_ = 0, mi_ = 0;
};

// The host API calls `accept(row)` admits, in start order.
template <typename Accept>
class ApiCallSource {
 public:
  ApiCallSource(const Trace& trace, Accept accept) : trace_(&trace), accept_(std::move(accept)) {}

  bool Next(TimeNs* s, TimeNs* e) {
    const ApiCallTable& a = trace_->api_calls;
    while (i_ < a.size() && !accept_(i_)) ++i_;
    if (i_ == a.size()) return false;
    *s = a.start_ns[i_];
    *e = a.end_ns[i_];
    ++i_;
    return true;
  }

 private:
  const Trace* trace_;
  Accept accept_;
  size_t i_ = 0;
};

}  // namespace sightline
