#include "analyses/ranks/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analyses/ranks/ranks_steps.h"
#include "base/stats.h"

namespace sightline {
namespace {

// Rank numbers: all from the trace if distinct, else all from file names if distinct, else the
// order given. Appends the ranks to r.ranks by number; returns, per rank, its index into
// `profiles`.
std::vector<size_t> NumberRanks(const std::vector<RankProfile>& profiles,
                                const std::vector<std::string>& file_names, RanksResult& r) {
  const size_t n = profiles.size();
  auto distinct = [](const std::vector<int32_t>& v) {
    std::set<int32_t> s;
    for (int32_t x : v) {
      if (x < 0 || !s.insert(x).second) return false;
    }
    return true;
  };
  std::vector<int32_t> from_trace(n), from_file(n), numbers(n);
  for (size_t i = 0; i < n; ++i) {
    from_trace[i] = profiles[i].trace_rank;
    from_file[i] = RankFromFileName(file_names[i]);
  }
  RankSource source = RankSource::kOrder;
  if (distinct(from_trace)) {
    source = RankSource::kTrace, numbers = from_trace;
  } else if (distinct(from_file)) {
    source = RankSource::kFileName, numbers = from_file;
  } else {
    for (size_t i = 0; i < n; ++i) numbers[i] = static_cast<int32_t>(i);
  }
  if (source != RankSource::kTrace &&
      std::any_of(from_trace.begin(), from_trace.end(), [](int32_t x) { return x >= 0; })) {
    r.notes.push_back(
        "the traces' own rank numbers are missing or repeat, so ranks come from the " +
        std::string(RankSourceName(source)));
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return numbers[a] < numbers[b]; });
  for (size_t i : order) {
    RankStats& s = r.ranks.emplace_back();
    s.rank = numbers[i];
    s.source = source;
    s.profile = &profiles[i];
  }
  return order;
}

// Sets the hosts (one clock each, in the order of their first rank) and each rank's host: from
// --ranks-per-host, else the traces, else the file names, when every rank has one; else each rank
// is its own clock. `order[i]` is the index into file_names of r.ranks[i].
void AssignHosts(RanksResult& r, const std::vector<size_t>& order,
                 const std::vector<std::string>& file_names, const RanksOptions& options) {
  const size_t n = r.ranks.size();
  std::vector<std::string> names(n);
  auto every = [&](auto&& host_of) {
    size_t known = 0;
    for (size_t i = 0; i < n; ++i) {
      names[i] = host_of(i);
      known += !names[i].empty();
    }
    return known;
  };
  if (options.ranks_per_host > 0) {
    r.host_source = HostSource::kOption;
    every(
        [&](size_t i) { return fmt::format("host {}", r.ranks[i].rank / options.ranks_per_host); });
  } else if (const size_t k = every([&](size_t i) { return r.ranks[i].profile->trace_host; });
             k == n) {
    r.host_source = HostSource::kTrace;
  } else if (const size_t f =
                 every([&](size_t i) { return HostFromFileName(file_names[order[i]]); });
             f == n) {
    r.host_source = HostSource::kFileName;
    if (k > 0) {
      r.notes.push_back(fmt::format(
          "{} of {} traces name their host: hosts taken from the file names instead", k, n));
    }
  } else {
    r.host_source = HostSource::kNone;
    if (k > 0 || f > 0) {
      r.notes.push_back(fmt::format(
          "{} of {} ranks have a host (from the {}): hosts not used, each rank aligned on its own "
          "clock (--ranks-per-host N says where the ranks ran)",
          std::max(k, f), n, k >= f ? "traces" : "file names"));
    }
    for (size_t i = 0; i < n; ++i) names[i] = fmt::format("rank {}", r.ranks[i].rank);
  }
  std::map<std::string, int> index;
  for (size_t i = 0; i < n; ++i) {
    auto [it, inserted] = index.try_emplace(names[i], static_cast<int>(r.hosts.size()));
    if (inserted || r.host_source == HostSource::kNone) {
      it->second = static_cast<int>(r.hosts.size());
      r.hosts.emplace_back().name = names[i];
    }
    r.hosts[it->second].ranks.push_back(static_cast<int>(i));
    r.ranks[i].host = it->second;
  }
}

}  // namespace

DurationNs MedianNs(std::vector<DurationNs> v) {
  return static_cast<DurationNs>(std::llround(Median(std::move(v))));
}

std::string HostLabel(const std::string& name) {
  return name.starts_with("host") ? name : "host " + name;
}

StatusOr<RanksResult> ComputeRanks(const std::vector<RankProfile>& profiles,
                                   const std::vector<std::string>& file_names,
                                   const RanksOptions& options) {
  RanksResult r;
  const size_t n = profiles.size();
  if (n == 0) return r;
  if (file_names.size() != n) {
    return InvalidArgumentError("ComputeRanks: one file name per profile expected");
  }
  const std::vector<size_t> order = NumberRanks(profiles, file_names, r);
  AssignHosts(r, order, file_names, options);
  if (n < 2) return r;
  const std::vector<CollectiveMatch> matches = MatchCollectives(r);
  if (matches.empty()) {
    r.notes.push_back(
        "no collective runs on every rank the same number of times: clocks are not aligned and "
        "waiting is not separated from transfer");
    return r;
  }
  AlignClocks(matches, r);
  SplitWaits(matches, r);
  return r;
}

}  // namespace sightline
