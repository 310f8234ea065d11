// Waiting and the straggler (ranks_steps.h): a rank that starts a collective before the last rank
// arrives waits for it; the rank that made the others wait most is the straggler, when its lead
// is more than the clocks' residual can explain.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "analyses/ranks/ranks_steps.h"

namespace sightline {
namespace {

// A lead the clocks cannot resolve names no one: the rank may only look late. The straggler's
// lead (its median, over the collectives it arrived last at, of how much later than the
// next-latest rank it started) is checked against its host's residual and that of the hosts of
// the ranks it was compared with (`runner_up_hosts`); without hosts, against the largest residual
// of any rank.
void CheckStraggler(const std::vector<DurationNs>& leads, const std::set<int>& runner_up_hosts,
                    RanksResult& r) {
  const size_t st = static_cast<size_t>(r.straggler);
  DurationNs residual = 0;
  if (r.host_source == HostSource::kNone) {
    for (const RankStats& s : r.ranks) residual = std::max(residual, s.residual_ns);
  } else {
    residual = r.hosts[r.ranks[st].host].residual_ns;
    for (int h : runner_up_hosts) residual = std::max(residual, r.hosts[h].residual_ns);
  }
  const DurationNs lead = MedianNs(leads);
  r.candidate = r.straggler;
  r.candidate_lead_ns = lead;
  r.candidate_residual_ns = residual;
  if (lead <= residual) {
    r.notes.push_back(fmt::format(
        "rank {} arrived last most often, but by a median lead of {}, within the clocks' "
        "residual of {}{}: no straggler named",
        r.ranks[st].rank, FormatDuration(lead), FormatDuration(residual),
        r.host_source == HostSource::kNone ? "" : " (its host's and the next-latest ranks')"));
    r.straggler = -1;
  }
}

}  // namespace

void SplitWaits(const std::vector<CollectiveMatch>& matches, RanksResult& r) {
  const size_t n = r.ranks.size();
  // The last rank's lead (how much later than the next-latest it started) is kept per rank to
  // check it against the clocks' residual.
  std::vector<std::vector<DurationNs>> leads(n);
  std::vector<std::set<int>> runner_up_hosts(n);  // hosts of the next-latest ranks
  for (const CollectiveMatch& m : matches) {
    MatchedCollective& c = r.collectives.emplace_back();
    c.name = m.key.first;
    c.slot = m.key.second;
    c.ordinal = m.k;
    TimeNs latest = INT64_MIN, earliest = INT64_MAX;
    for (size_t ri = 0; ri < n; ++ri) {
      const TimeNs s = m.at[ri]->start_ns - r.ranks[ri].offset_ns;
      if (s > latest) latest = s, c.last = static_cast<int>(ri);
      earliest = std::min(earliest, s);
    }
    c.aligned_start_ns = earliest;
    c.skew_ns = latest - earliest;
    TimeNs second = INT64_MIN;
    int runner_up = -1;
    for (size_t ri = 0; ri < n; ++ri) {
      const TimeNs s = m.at[ri]->start_ns - r.ranks[ri].offset_ns;
      if (static_cast<int>(ri) != c.last && s > second)
        second = s, runner_up = static_cast<int>(ri);
    }
    leads[c.last].push_back(latest - second);
    runner_up_hosts[c.last].insert(r.ranks[runner_up].host);
    DurationNs others = 0;
    for (size_t ri = 0; ri < n; ++ri) {
      RankStats& s = r.ranks[ri];
      const DurationNs dur = m.at[ri]->end_ns - m.at[ri]->start_ns;
      const DurationNs wait =
          std::clamp<DurationNs>(latest - (m.at[ri]->start_ns - s.offset_ns), 0, dur);
      ++s.collectives;
      s.collective_ns += dur;
      s.wait_ns += wait;
      s.transfer_ns += dur - wait;
      c.max_wait_ns = std::max(c.max_wait_ns, wait);
      if (static_cast<int>(ri) != c.last) others += wait;
    }
    ++r.ranks[c.last].last_count;
    r.ranks[c.last].caused_wait_ns += others;
  }
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const MatchedCollective& a, const MatchedCollective& b) {
                     return a.aligned_start_ns < b.aligned_start_ns;
                   });
  DurationNs best = 0;
  for (size_t ri = 0; ri < n; ++ri) {
    if (r.ranks[ri].caused_wait_ns > best) best = r.ranks[ri].caused_wait_ns, r.straggler = ri;
  }
  if (r.straggler >= 0) {
    CheckStraggler(leads[r.straggler], runner_up_hosts[r.straggler], r);
  }
}

}  // namespace sightline
