// Matching collectives across ranks (ranks_steps.h): by process group and sequence number when
// the traces say which collective each kernel was, else by order, the k-th kernel of a name on a
// stream slot. Counts that differ leave the tail unmatched (a profiler window that starts or stops
// at a different step on some rank).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyses/ranks/ranks_steps.h"

namespace sightline {
namespace {

using Key = std::pair<int32_t, int32_t>;  // (index into RanksResult::names, stream slot)
// One rank's communication kernels per (name, slot), in start order.
using KernelLists = std::map<Key, std::vector<const CommKernel*>>;
using SeqKey = std::pair<std::string, int64_t>;  // (process group, sequence number)
using BySeq = std::map<SeqKey, const CommKernel*>;

// Whether to match by sequence number: when every communication kernel of every rank has one and
// no rank has two kernels for one, the trace says which collective each kernel was. Fills `by_seq`
// (per rank) on the way, and notes why not when some kernels carry one.
bool MatchableBySequence(RanksResult& r, std::vector<BySeq>& by_seq) {
  const size_t n = r.ranks.size();
  size_t with_seq = 0, total = 0;
  for (size_t ri = 0; ri < n; ++ri) {
    for (const CommKernel& c : r.ranks[ri].profile->comm) {
      ++total;
      with_seq += c.seq >= 0;
    }
  }
  by_seq.assign(n, {});
  bool sequence = total > 0 && with_seq == total;
  for (size_t ri = 0; ri < n && sequence; ++ri) {
    const RankProfile& p = *r.ranks[ri].profile;
    for (const CommKernel& c : p.comm) {
      if (!by_seq[ri].emplace(SeqKey{p.communicators[c.communicator], c.seq}, &c).second) {
        sequence = false;
        r.notes.push_back(fmt::format(
            "rank {} runs several communication kernels for one collective (process group {}, "
            "sequence number {}): collectives matched by order",
            r.ranks[ri].rank, p.communicators[c.communicator], c.seq));
        break;
      }
    }
  }
  if (!sequence && with_seq > 0 && with_seq < total) {
    r.notes.push_back(
        fmt::format("{} of {} communication kernels carry a process group and sequence number "
                    "(record_param_comms): collectives matched by order",
                    with_seq, total));
  }
  return sequence;
}

// A collective on every rank whose (process group, sequence number) is on every rank; the others
// are counted per process group.
void MatchBySequence(const std::vector<BySeq>& by_seq, const std::map<std::string, int32_t>& global,
                     RanksResult& r, std::vector<CollectiveMatch>& matches) {
  const size_t n = r.ranks.size();
  std::map<SeqKey, size_t> present;
  for (const auto& m : by_seq) {
    for (const auto& [key, c] : m) ++present[key];
  }
  std::map<std::string, std::pair<int64_t, int64_t>>
      missing;  // communicator -> (collectives, kernels)
  for (const auto& [key, count] : present) {
    if (count < n) {
      ++missing[key.first].first;
      missing[key.first].second += static_cast<int64_t>(count);
      r.unmatched += static_cast<int64_t>(count);
      continue;
    }
    CollectiveMatch& m = matches.emplace_back();
    const RankProfile& p0 = *r.ranks[0].profile;
    const CommKernel* c0 = by_seq[0].at(key);
    m.key = {global.at(p0.comm_names[c0->name]), c0->slot};
    m.k = key.second;
    for (size_t ri = 0; ri < n; ++ri) m.at.push_back(by_seq[ri].at(key));
  }
  for (const auto& [comm, c] : missing) {
    r.unmatched_notes.push_back(fmt::format(
        "process group {}: {} collectives are missing on some ranks ({} kernels left out)", comm,
        c.first, c.second));
  }
}

// The k-th kernel of every (name, slot) on every rank, for k below the fewest any rank has.
void MatchByOrder(const std::vector<KernelLists>& lists, RanksResult& r,
                  std::vector<CollectiveMatch>& matches) {
  const size_t n = r.ranks.size();
  std::set<Key> keys;
  for (const auto& l : lists) {
    for (const auto& [key, v] : l) keys.insert(key);
  }
  auto count_of = [&](size_t ri, const Key& key) -> size_t {
    auto it = lists[ri].find(key);
    return it == lists[ri].end() ? 0 : it->second.size();
  };
  for (const Key& key : keys) {
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t ri = 0; ri < n; ++ri) {
      lo = std::min(lo, count_of(ri, key));
      hi = std::max(hi, count_of(ri, key));
    }
    if (lo != hi) {
      std::string counts;
      for (size_t ri = 0; ri < n; ++ri) {
        const size_t count = count_of(ri, key);
        r.unmatched += static_cast<int64_t>(count - lo);
        counts += fmt::format("{}rank {}: {}", ri ? ", " : "", r.ranks[ri].rank, count);
      }
      r.unmatched_notes.push_back(fmt::format("{} (stream slot {}): {}; the first {} matched",
                                              r.names[key.first], key.second, counts, lo));
    }
    for (size_t k = 0; k < lo; ++k) {
      CollectiveMatch& m = matches.emplace_back();
      m.key = key;
      m.k = static_cast<int64_t>(k);
      for (size_t ri = 0; ri < n; ++ri) m.at.push_back(lists[ri].at(key)[k]);
    }
  }
}

}  // namespace

std::vector<CollectiveMatch> MatchCollectives(RanksResult& r) {
  // Collective names across ranks; per rank, per (name, slot), its kernels in start order.
  const size_t n = r.ranks.size();
  std::map<std::string, int32_t> global;
  std::vector<KernelLists> lists(n);
  for (size_t ri = 0; ri < n; ++ri) {
    const RankProfile& p = *r.ranks[ri].profile;
    std::vector<int32_t> to_global(p.comm_names.size());
    for (size_t c = 0; c < p.comm_names.size(); ++c) {
      auto [it, inserted] =
          global.try_emplace(p.comm_names[c], static_cast<int32_t>(r.names.size()));
      if (inserted) r.names.push_back(p.comm_names[c]);
      to_global[c] = it->second;
    }
    for (const CommKernel& c : p.comm) lists[ri][{to_global[c.name], c.slot}].push_back(&c);
  }
  std::vector<CollectiveMatch> matches;
  std::vector<BySeq> by_seq;
  r.matched_by_sequence = MatchableBySequence(r, by_seq);
  if (r.matched_by_sequence) {
    MatchBySequence(by_seq, global, r, matches);
  } else {
    MatchByOrder(lists, r, matches);
  }
  return matches;
}

}  // namespace sightline
