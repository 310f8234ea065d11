// Rule straggler: across ranks, the others wait inside collectives for one rank that arrives last
// (multi-rank only; runs once over all inputs on the ranks analysis, not per trace).
// docs/analyses/findings.md, "straggler".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/ranks/ranks.h"

namespace sightline {
namespace {

constexpr double kStragglerMinWaitShare = 0.10;  // of the other ranks' matched collective time
constexpr double kMinStragglerShare = 0.5;       // of all waiting: one rank, not random skew
constexpr DurationNs kMinSavingNs = 10'000;

}  // namespace

Status RuleStraggler(const RanksResult& ranks, std::vector<Finding>& out) {
  if (ranks.straggler < 0 || ranks.ranks.size() < 2 || ranks.collectives.empty()) {
    return Status::Ok();
  }
  const RankStats& s = ranks.ranks[ranks.straggler];
  DurationNs others_collective = 0, all_wait = 0;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    all_wait += ranks.ranks[i].wait_ns;
    if (static_cast<int>(i) != ranks.straggler) others_collective += ranks.ranks[i].collective_ns;
  }
  // The wall time the job loses: at each collective the straggler is last at, the others wait in
  // parallel, so the longest of their waits is what its late arrival costs.
  DurationNs saving = 0;
  std::map<std::string_view, std::pair<int64_t, DurationNs>> by_name;  // last count, max waits
  for (const MatchedCollective& c : ranks.collectives) {
    if (c.last != ranks.straggler) continue;
    saving += c.max_wait_ns;
    auto& e = by_name[ranks.names[c.name]];
    ++e.first;
    e.second += c.max_wait_ns;
  }
  if (others_collective <= 0 || s.caused_wait_ns < kStragglerMinWaitShare * others_collective ||
      s.caused_wait_ns < kMinStragglerShare * all_wait || saving < kMinSavingNs) {
    return Status::Ok();
  }
  const double share = static_cast<double>(s.caused_wait_ns) / others_collective;
  Finding f;
  f.id = "straggler";
  // Ends that do not line up (point-to-point, clock noise) make waits rough: one level lower.
  DurationNs worst_residual = 0;
  for (const RankStats& r : ranks.ranks) worst_residual = std::max(worst_residual, r.residual_ns);
  const bool rough = worst_residual * 10 > s.collective_ns / std::max<int64_t>(s.collectives, 1);
  f.severity = share >= 0.3 && !rough ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "Rank {} is the straggler: the other ranks spend {} of their collective time waiting for "
      "it",
      s.rank, Percent(s.caused_wait_ns, others_collective));
  f.evidence.push_back({"straggler_rank", "Straggler rank", int64_t{s.rank}, Unit::kCount});
  f.evidence.push_back(
      {"last_count", "Collectives it arrived last at", s.last_count, Unit::kCount});
  f.evidence.push_back({"matched_collectives", "Collectives matched",
                        static_cast<int64_t>(ranks.collectives.size()), Unit::kCount});
  f.evidence.push_back({"others_wait_ns", "Other ranks' waiting for it (sum over ranks)",
                        s.caused_wait_ns, Unit::kDurationNs});
  f.evidence.push_back({"others_collective_ns", "Other ranks' matched collective time",
                        others_collective, Unit::kDurationNs});
  f.evidence.push_back({"wait_pct", "Waiting share", 100.0 * share, Unit::kPercent});
  f.evidence.push_back(
      {"clock_residual_ns", "Largest clock-alignment residual", worst_residual, Unit::kDurationNs});
  std::string names;
  for (const auto& [name, e] : by_name) {
    names += fmt::format("{}{} ×{} ({})", names.empty() ? "" : ", ", name, e.first,
                         FormatDuration(e.second));
  }
  f.where =
      fmt::format("rank {} ({}); collectives it was last at: {}", s.rank, s.profile->label, names);
  f.recommendation =
      "Find what delays this rank before its collectives: compare its compute and idle time per "
      "step with the others (the per-rank table and its own sections), look for host stalls on "
      "its process (data loading, GC, CPU contention, a different NUMA/CPU affinity), uneven work "
      "(sequence lengths, MoE expert load, pipeline stage sizes) and a slower or throttled GPU; "
      "balance the work or fix that host.";
  f.estimated_savings_ns = saving;
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
