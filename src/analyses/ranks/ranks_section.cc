// The "ranks" report section (ranks.h, AddRanksSection): facts, one row per rank with the
// communication and waiting charts, the matched collectives with the most skew, the clocks per
// host, and notes on how far the clocks and the matching can be trusted.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "analyses/ranks/ranks.h"
#include "analyses/ranks/ranks_steps.h"

namespace sightline {
namespace {

// The facts: where ranks and hosts came from, what was matched, the straggler, total waiting.
void AddRanksFacts(const RanksResult& result, int32_t world, Section& s) {
  const size_t n = result.ranks.size();
  s.AddFact("rank_source", "Rank numbers from",
            std::string(RankSourceName(result.ranks[0].source)));
  if (world > 0)
    s.AddFact("world_size", "World size (from the trace)", int64_t{world}, Unit::kCount);
  if (n < 2) return;
  DurationNs total_wait = 0, total_collective = 0;
  for (const RankStats& r : result.ranks) {
    total_wait += r.wait_ns;
    total_collective += r.collective_ns;
  }
  s.AddFact("matched_collectives", "Collectives matched on every rank",
            static_cast<int64_t>(result.collectives.size()), Unit::kCount);
  s.AddFact("unmatched_comm_kernels", "Communication kernels not matched", result.unmatched,
            Unit::kCount);
  s.AddFact("collective_matching", "Collectives matched by",
            std::string(result.matched_by_sequence
                            ? "process group and sequence number (record_param_comms)"
                            : "order (k-th kernel of a name on a stream slot)"));
  const bool hosts = result.host_source != HostSource::kNone;
  s.AddFact("host_source", "Hosts (shared clocks) from",
            std::string(HostSourceName(result.host_source)));
  if (hosts) {
    s.AddFact("hosts", "Hosts", static_cast<int64_t>(result.hosts.size()), Unit::kCount);
  }
  s.AddFact("clock_alignment", "Clock alignment",
            std::string(!result.aligned ? "none (no matched collectives)"
                        : hosts ? "per host: median end-time difference of the host's ranks "
                                  "at matched collectives"
                                : "per rank: median end-time difference of matched "
                                  "collectives"));
  if (result.straggler >= 0) {
    s.AddFact("straggler_rank", "Straggler rank", int64_t{result.ranks[result.straggler].rank},
              Unit::kCount);
  } else {
    s.AddFact("straggler_rank", "Straggler rank", Value(), Unit::kCount);
  }
  if (result.candidate >= 0) {
    s.AddFact("straggler_lead_ns", "Last rank's median lead", result.candidate_lead_ns,
              Unit::kDurationNs);
    s.AddFact("straggler_residual_ns", "Clock residual it must exceed",
              result.candidate_residual_ns, Unit::kDurationNs);
  }
  s.AddFact("total_wait_ns", "Waiting in collectives, all ranks", total_wait, Unit::kDurationNs);
  s.AddFact("wait_pct_of_collective", "Waiting share of collective time",
            total_collective > 0 ? 100.0 * total_wait / total_collective : 0.0, Unit::kPercent);
}

// One row per rank, and the ranks side by side as charts.
void AddRanksTable(const RanksResult& result, Section& s) {
  Table& t = s.AddTable("ranks", "Per rank",
                        {{"rank", "Rank", Unit::kCount},
                         {"input", "Input", Unit::kText, true},
                         {"gpu_busy_ns", "GPU busy", Unit::kDurationNs},
                         {"gpu_busy_pct", "Busy %", Unit::kPercent},
                         {"comm_ns", "Comm", Unit::kDurationNs},
                         {"comm_pct", "Comm % of busy", Unit::kPercent},
                         {"overlap_ns", "Comm ∩ compute", Unit::kDurationNs},
                         {"overlap_pct", "Overlap % of comm", Unit::kPercent},
                         {"exposed_comm_ns", "Comm alone", Unit::kDurationNs},
                         {"collectives", "Matched", Unit::kCount},
                         {"wait_ns", "Wait", Unit::kDurationNs},
                         {"transfer_ns", "Transfer", Unit::kDurationNs},
                         {"wait_pct", "Wait %", Unit::kPercent},
                         {"last_count", "Last", Unit::kCount},
                         {"caused_wait_ns", "Others waited", Unit::kDurationNs},
                         {"clock_offset_ns", "Clock offset", Unit::kDurationNs, true},
                         {"clock_residual_ns", "Residual", Unit::kDurationNs, true}});
  const bool with_hosts = result.host_source != HostSource::kNone;
  if (with_hosts) t.columns.push_back({"host", "Host", Unit::kText, true});
  for (const RankStats& r : result.ranks) {
    const RankProfile& p = *r.profile;
    auto pct = [](double a, double b) { return b > 0 ? Value(100.0 * a / b) : Value(); };
    t.rows.push_back({int64_t{r.rank}, p.label, p.busy_ns, pct(p.busy_ns, p.span_ns), p.comm_ns,
                      pct(p.comm_ns, p.busy_ns), p.overlap_ns, pct(p.overlap_ns, p.comm_ns),
                      p.comm_ns - p.overlap_ns, r.collectives, r.wait_ns, r.transfer_ns,
                      pct(r.wait_ns, r.collective_ns), r.last_count, r.caused_wait_ns, r.offset_ns,
                      r.residual_ns});
    if (with_hosts) t.rows.back().emplace_back(result.hosts[r.host].name);
  }
  // Ranks side by side: communication time and waiting per rank, in the table's order.
  std::vector<std::pair<std::string, double>> comm_bars, wait_bars;
  bool any_comm = false, any_wait = false;
  for (const RankStats& r : result.ranks) {
    const std::string label = "rank " + std::to_string(r.rank);
    comm_bars.emplace_back(label, static_cast<double>(r.profile->comm_ns));
    wait_bars.emplace_back(label, static_cast<double>(r.wait_ns));
    any_comm |= r.profile->comm_ns > 0;
    any_wait |= r.wait_ns > 0;
  }
  if (any_comm) {
    s.AddBarChart("comm_per_rank", "Communication time per rank", Unit::kDurationNs, comm_bars);
  }
  if (any_wait) {
    s.AddBarChart("wait_per_rank", "Waiting in collectives per rank", Unit::kDurationNs, wait_bars);
  }
  t.note =
      "Comm: time a communication kernel runs (union per device); Wait: inside matched "
      "collectives, before the last rank arrived; Transfer: the rest; Last: collectives this rank "
      "arrived last at; Others waited: what that cost the other ranks.";
}

// The 15 matched collectives with the most skew.
void AddCollectivesTable(const RanksResult& result, Section& s) {
  std::vector<const MatchedCollective*> top;
  for (const MatchedCollective& c : result.collectives) top.push_back(&c);
  const size_t keep = std::min<size_t>(top.size(), 15);
  std::partial_sort(top.begin(), top.begin() + keep, top.end(),
                    [](const MatchedCollective* a, const MatchedCollective* b) {
                      return a->skew_ns > b->skew_ns;
                    });
  TimeNs first = result.collectives.front().aligned_start_ns;
  Table& c = s.AddTable("collectives", "Matched collectives with the most skew",
                        {{"name", "Collective", Unit::kText},
                         {"stream_slot", "Slot", Unit::kCount},
                         {"ordinal", "#", Unit::kCount},
                         {"start_ns", "Start (ref. clock)", Unit::kDurationNs},
                         {"last_rank", "Last rank", Unit::kCount},
                         {"skew_ns", "Skew", Unit::kDurationNs},
                         {"max_wait_ns", "Longest wait", Unit::kDurationNs}});
  for (size_t i = 0; i < keep; ++i) {
    const MatchedCollective& m = *top[i];
    c.rows.push_back({result.names[m.name], int64_t{m.slot}, m.ordinal, m.aligned_start_ns - first,
                      int64_t{result.ranks[m.last].rank}, m.skew_ns, m.max_wait_ns});
  }
  c.total_rows = static_cast<int64_t>(result.collectives.size());
  c.note =
      "Skew: latest minus earliest start across ranks after clock alignment; Start: since the "
      "first matched collective, on the lowest rank's clock; #: the collective's sequence number "
      "in "
      "its process group when matched by it, else the k-th kernel of that name on that stream "
      "slot.";
}

// One row per host: its ranks, its clock's offset and residual.
void AddHostsTable(const RanksResult& result, Section& s) {
  Table& h = s.AddTable("hosts", "Clocks per host",
                        {{"host", "Host", Unit::kText},
                         {"ranks", "Ranks", Unit::kText},
                         {"clock_offset_ns", "Clock offset", Unit::kDurationNs},
                         {"estimated_offset_ns", "Estimated offset", Unit::kDurationNs},
                         {"clock_residual_ns", "Residual", Unit::kDurationNs},
                         {"end_pairs", "End times compared", Unit::kCount}});
  for (const HostClock& host : result.hosts) {
    std::string ranks;
    for (int ri : host.ranks) {
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(result.ranks[ri].rank);
    }
    h.rows.push_back({host.name, ranks, host.offset_ns, host.estimated_offset_ns, host.residual_ns,
                      host.end_pairs});
  }
  h.note = fmt::format(
      "Hosts from the {}. The ranks of a host share its clock: one offset to rank {} (the "
      "median of all its ranks' end-time differences at matched collectives, applied when "
      "larger than the residual; the reference rank's host: none) and one residual (the "
      "median |difference| left), which a straggler's lead must exceed.",
      HostSourceName(result.host_source), result.ranks[0].rank);
}

// Per clock, the offset estimated and whether it was applied; then how well the clocks resolve
// the waits.
void AddClockNotes(const RanksResult& result, Section& s) {
  const size_t n = result.ranks.size();
  if (result.host_source == HostSource::kNone) {
    for (size_t i = 1; i < n; ++i) {
      const RankStats& r = result.ranks[i];
      s.notes.push_back(fmt::format(
          "rank {}: estimated clock offset to rank {} {} ± {}: {}", r.rank, result.ranks[0].rank,
          FormatDuration(r.estimated_offset_ns), FormatDuration(r.residual_ns),
          r.offset_ns != 0 ? "applied" : "not applied (not distinguishable from 0)"));
    }
  } else {
    for (const HostClock& host : result.hosts) {
      if (host.end_pairs == 0) continue;
      const bool reference = &host == &result.hosts[result.ranks[0].host];
      s.notes.push_back(
          fmt::format("{}: estimated clock offset to rank {} {} ± {}: {}", HostLabel(host.name),
                      result.ranks[0].rank, FormatDuration(host.estimated_offset_ns),
                      FormatDuration(host.residual_ns),
                      reference             ? "none applied (the reference rank's host)"
                      : host.offset_ns != 0 ? "applied"
                                            : "not applied (not distinguishable from 0)"));
    }
  }
  DurationNs worst = 0;
  for (const RankStats& r : result.ranks) worst = std::max(worst, r.residual_ns);
  std::vector<DurationNs> d;
  for (const RankStats& r : result.ranks) {
    if (r.collectives > 0) d.push_back(r.collective_ns / r.collectives);
  }
  const DurationNs med_dur = MedianNs(d);
  s.notes.push_back(fmt::format(
      "clocks checked on the end times of {} matched collectives (ranks finish a collective "
      "nearly together); the end times left after alignment differ by a median of up to {} "
      "per rank ({} of a mean collective): {}",
      result.collectives.size(), FormatDuration(worst),
      med_dur > 0 ? fmt::format("{:.0f}%", 100.0 * worst / med_dur) : "n/a",
      worst * 10 <= med_dur ? "waits are well resolved"
                            : "waits are rough (the collectives do not end together, e.g. "
                              "point-to-point send/recv)"));
}

}  // namespace

void AddRanksSection(const RanksResult& result, Report& report) {
  Section& s = report.AddSection("ranks", "Ranks", -1);
  const size_t n = result.ranks.size();
  s.AddFact("ranks", "Ranks given", static_cast<int64_t>(n), Unit::kCount);
  if (n == 0) return;
  int32_t world = 0;
  for (const RankStats& r : result.ranks) world = std::max(world, r.profile->world_size);
  AddRanksFacts(result, world, s);
  AddRanksTable(result, s);
  if (n < 2) {
    const RankStats& r = result.ranks[0];
    s.notes.push_back(fmt::format(
        "one rank given (rank {}{}): per-rank communication only; skew, waiting and the "
        "straggler need the traces of two or more ranks (sightline analyze r0 r1 ...)",
        r.rank, world > 0 ? fmt::format(" of {}", world) : std::string()));
  }
  if (!result.collectives.empty()) AddCollectivesTable(result, s);
  if (result.host_source != HostSource::kNone && n >= 2) AddHostsTable(result, s);
  if (result.aligned) AddClockNotes(result, s);
  for (const std::string& u : result.unmatched_notes) s.notes.push_back("not matched: " + u);
  for (const std::string& note : result.notes) s.notes.push_back(note);
}

}  // namespace sightline
