// The steps of ComputeRanks (ranks.h), one file each: the ranks' numbers and hosts (ranks.cc),
// the collectives matched on every rank (collective_matching.cc), one clock offset per host
// (clock_alignment.cc), and waiting against transfer with the straggler it names
// (stragglers.cc). Internal to the ranks room: tests and callers use ranks.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyses/ranks/ranks.h"
#include "base/time_units.h"

namespace sightline {

// One collective on every rank: the k-th kernel of a (name, stream slot) on each, or the kernels
// the trace gives one (process group, sequence number).
struct CollectiveMatch {
  std::pair<int32_t, int32_t> key;    // (index into RanksResult::names, stream slot)
  int64_t k = 0;                      // the ordinal, or the sequence number
  std::vector<const CommKernel*> at;  // per rank, in RanksResult::ranks order
};

// The median (base/stats.h's one definition), rounded to whole ns.
DurationNs MedianNs(std::vector<DurationNs> v);

// "host vm" for a note; "host 1" (--ranks-per-host's names) as it is.
std::string HostLabel(const std::string& name);

// Names the collectives across ranks (r.names) and matches them: by process group and sequence
// number when every kernel carries them, else by order; counts what is left out (r.unmatched,
// r.unmatched_notes) and says why it matched as it did (r.notes). Needs r.ranks.
std::vector<CollectiveMatch> MatchCollectives(RanksResult& r);

// Each host's clock offset to the reference (lowest) rank and its residual, from the matched end
// times, and each rank's (r.aligned, r.hosts, r.ranks). Needs r.hosts.
void AlignClocks(const std::vector<CollectiveMatch>& matches, RanksResult& r);

// Per matched collective, who arrived last and what the others waited (r.collectives, the ranks'
// wait and transfer), then the straggler: the rank that caused the most waiting, when its lead
// exceeds what the clocks can resolve. Needs the clocks aligned.
void SplitWaits(const std::vector<CollectiveMatch>& matches, RanksResult& r);

}  // namespace sightline
