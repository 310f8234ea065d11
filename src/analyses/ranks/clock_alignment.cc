// Clock alignment (ranks_steps.h): the ranks of a collective finish it nearly together (none can
// finish before the last one's data arrives), so a clock's offset to the reference (lowest) rank
// is the median difference of matched end times, over every rank on that clock (a host's ranks
// share one); what is left is the residual.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "analyses/ranks/ranks_steps.h"

namespace sightline {
namespace {

// Ranks of one host whose own clock offsets differ by less than this are taken as sharing a
// clock, however little their end times scatter (generated traces scatter by nothing).
constexpr DurationNs kSameClockNs = 10'000;

// Ranks said to share a host whose own clocks disagree by more than their own end-time scatter
// explains were probably not on one host (e.g. containers that all call themselves "vm"): the
// pooled offset then fits none of them, and the residual shows it; say why.
void CheckSharedClock(const HostClock& host, const std::vector<CollectiveMatch>& matches,
                      RanksResult& r) {
  if (r.host_source == HostSource::kNone || host.ranks.size() < 2) return;
  DurationNs lo = INT64_MAX, hi = INT64_MIN, scatter = 0;
  for (int ri : host.ranks) {
    std::vector<DurationNs> own;
    for (const CollectiveMatch& m : matches) {
      own.push_back(ri == 0 ? 0 : m.at[ri]->end_ns - m.at[0]->end_ns);
    }
    const DurationNs o = MedianNs(own);
    for (DurationNs& x : own) x = std::abs(x - o);
    lo = std::min(lo, o), hi = std::max(hi, o);
    scatter = std::max(scatter, MedianNs(own));
  }
  if (hi - lo > std::max<DurationNs>(4 * scatter, kSameClockNs)) {
    r.notes.push_back(fmt::format(
        "{}: its ranks' own clock offsets differ by {}, more than their end times scatter "
        "({}): they may not share a clock (--ranks-per-host N says where the ranks ran)",
        HostLabel(host.name), FormatDuration(hi - lo), FormatDuration(scatter)));
  }
}

// Host h's offset and residual, and those of its ranks.
void AlignHost(size_t h, const std::vector<CollectiveMatch>& matches, RanksResult& r) {
  HostClock& host = r.hosts[h];
  std::vector<DurationNs> d;
  for (int ri : host.ranks) {
    if (ri == 0) continue;
    for (const CollectiveMatch& m : matches) d.push_back(m.at[ri]->end_ns - m.at[0]->end_ns);
  }
  host.end_pairs = static_cast<int64_t>(d.size());
  if (d.empty()) return;  // the reference rank alone: its own clock, offset 0
  const DurationNs offset = MedianNs(d);
  std::vector<DurationNs> raw = d;
  for (DurationNs& x : raw) x = std::abs(x);
  std::vector<DurationNs> left = d;
  for (DurationNs& x : left) x = std::abs(x - offset);
  host.estimated_offset_ns = offset;
  host.residual_ns = MedianNs(left);
  // The reference rank's host shares its clock. Elsewhere, an offset the end times cannot tell
  // from zero is not applied: the clocks are taken as comparable (without hosts, ranks may share
  // one), which keeps their own skew.
  if (h != static_cast<size_t>(r.ranks[0].host) && std::abs(offset) > host.residual_ns) {
    host.offset_ns = offset;
  } else {
    host.residual_ns = MedianNs(raw);
  }
  for (int ri : host.ranks) {
    RankStats& s = r.ranks[ri];
    s.offset_ns = host.offset_ns;
    s.estimated_offset_ns = host.estimated_offset_ns;
    if (ri == 0) continue;
    std::vector<DurationNs> e;
    for (const CollectiveMatch& m : matches) {
      e.push_back(std::abs(m.at[ri]->end_ns - m.at[0]->end_ns - host.offset_ns));
    }
    s.residual_ns = MedianNs(e);
  }
  CheckSharedClock(host, matches, r);
}

}  // namespace

void AlignClocks(const std::vector<CollectiveMatch>& matches, RanksResult& r) {
  r.aligned = true;
  for (size_t h = 0; h < r.hosts.size(); ++h) AlignHost(h, matches, r);
}

}  // namespace sightline
