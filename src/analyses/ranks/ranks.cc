#include "analyses/ranks/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "base/stats.h"
#include "facts/intervals.h"
#include "facts/results_cache.h"

namespace sightline {
namespace {

// Ranks of one host whose own clock offsets differ by less than this are taken as sharing a
// clock, however little their end times scatter (generated traces scatter by nothing).
constexpr DurationNs kSameClockNs = 10'000;

// "host vm" for a note; "host 1" (--ranks-per-host's names) as it is.
std::string HostLabel(const std::string& name) {
  return name.starts_with("host") ? name : "host " + name;
}

// The median (base/stats.h's one definition), rounded to whole ns.
DurationNs MedianNs(std::vector<DurationNs> v) {
  return static_cast<DurationNs>(std::llround(Median(std::move(v))));
}

// Reads digits at s[i..]; -1 when there are none.
int32_t DigitsAt(const std::string& s, size_t i) {
  int64_t v = -1;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = (v < 0 ? 0 : v) * 10 + (s[i] - '0');
    if (v > INT32_MAX) return -1;
  }
  return static_cast<int32_t>(v);
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

const char* RankSourceName(RankSource source) {
  switch (source) {
    case RankSource::kTrace:
      return "trace";
    case RankSource::kFileName:
      return "file name";
    case RankSource::kOrder:
      return "order";
  }
  return "order";
}

int32_t RankFromFileName(const std::string& file_name) {
  std::string s;
  for (char ch : file_name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // "rank3", "rank_3", "rank-3", "rank.3": the last such mention wins (directories come first).
  int32_t rank = -1;
  for (size_t p = s.find("rank"); p != std::string::npos; p = s.find("rank", p + 1)) {
    size_t i = p + 4;
    if (i < s.size() && (s[i] == '_' || s[i] == '-' || s[i] == '.')) ++i;
    const int32_t r = DigitsAt(s, i);
    if (r >= 0) rank = r;
  }
  if (rank >= 0) return rank;
  // "-r3" / "_r3" / ".r3" followed by a separator or the end: short forms some launchers write.
  for (size_t p = 0; p + 2 < s.size(); ++p) {
    if ((s[p] != '-' && s[p] != '_' && s[p] != '.') || s[p + 1] != 'r') continue;
    size_t i = p + 2;
    const int32_t r = DigitsAt(s, i);
    if (r < 0) continue;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == s.size() || s[i] == '.' || s[i] == '_' || s[i] == '-') rank = r;
  }
  return rank;
}

const char* HostSourceName(HostSource source) {
  switch (source) {
    case HostSource::kOption:
      return "--ranks-per-host";
    case HostSource::kTrace:
      return "trace";
    case HostSource::kFileName:
      return "file name";
    case HostSource::kNone:
      return "none";
  }
  return "none";
}

std::string HostFromFileName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  constexpr std::string_view kSuffix = ".pt.trace.json";
  if (!name.ends_with(kSuffix)) return "";
  name.resize(name.size() - kSuffix.size());
  // "{worker}.{time}": the time is digits (ms or ns since the epoch, by PyTorch version).
  auto all_digits = [](std::string_view v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || !all_digits(std::string_view(name).substr(dot + 1))) return "";
  // The default worker name "{hostname}_{pid}" (a host name may hold dots, not underscores).
  const std::string worker = name.substr(0, dot);
  const size_t under = worker.rfind('_');
  if (under == std::string::npos || under == 0 ||
      !all_digits(std::string_view(worker).substr(under + 1))) {
    return "";
  }
  return worker.substr(0, under);
}

StatusOr<RankProfile> ComputeRankProfile(AnalysisContext& context, const std::string& label,
                                         int input) {
  const Trace& trace = context.trace();
  RankProfile p;
  p.label = label;
  p.input = input;
  p.trace_rank = trace.source.rank;
  p.world_size = trace.source.world_size;
  p.trace_host = trace.source.host;
  for (int32_t d : context.GpuDevices()) {
    const std::vector<Interval>& busy = context.Busy(d);
    p.busy_ns += TotalLength(busy);
    p.span_ns += busy.back().end_ns - busy.front().start_ns;
    const CommSplit& c = context.Comm(d);
    p.comm_ns += c.comm_ns;
    p.compute_ns += c.compute_ns;
    p.overlap_ns += c.overlap_ns;
  }

  // Communication kernels by short name and stream slot; -1 not yet seen, else index into
  // comm_names.
  const KernelTable& k = trace.kernels;
  std::unordered_map<uint32_t, int32_t> name_index;
  // (name, device, stream) -> slot: assigned after the scan, by (device, stream) order per name.
  std::vector<std::pair<int32_t, int32_t>> kernel_dev_stream;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] < 0 || !context.IsCommunication(k.name[i])) continue;
    auto [it, inserted] =
        name_index.try_emplace(k.name[i].value, static_cast<int32_t>(p.comm_names.size()));
    if (inserted) p.comm_names.emplace_back(trace.str(k.short_name[i]));
    p.comm.push_back({it->second, 0, k.start_ns[i], k.end_ns[i]});
    kernel_dev_stream.push_back({k.device[i], k.stream[i]});
    ++p.comm_kernels;
  }
  // Each kernel's collective: the record_param_comms range around its launching call, on the
  // launching thread (ranges of one thread do not overlap: the latest one starting before the
  // launch is the only candidate).
  const CollectiveTable& coll = trace.collectives;
  if (coll.size() > 0) {
    std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_thread;
    for (uint32_t i = 0; i < coll.size(); ++i) by_thread[{coll.pid[i], coll.tid[i]}].push_back(i);
    std::unordered_map<uint32_t, int32_t> communicator_index;
    size_t c = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] < 0 || !context.IsCommunication(k.name[i])) continue;
      CommKernel& ck = p.comm[c++];
      const int32_t call = k.launch_call[i];
      if (call == kNoRow) continue;
      const ApiCallTable& api = trace.api_calls;
      auto it = by_thread.find({api.pid[call], api.tid[call]});
      if (it == by_thread.end()) continue;
      const TimeNs t = api.start_ns[call];
      const std::vector<uint32_t>& rows = it->second;
      auto pos = std::upper_bound(rows.begin(), rows.end(), t,
                                  [&](TimeNs v, uint32_t r) { return v < coll.start_ns[r]; });
      if (pos == rows.begin()) continue;
      const uint32_t r = *std::prev(pos);
      if (coll.end_ns[r] < t) continue;
      auto [ci, inserted] = communicator_index.try_emplace(
          coll.communicator[r].value, static_cast<int32_t>(p.communicators.size()));
      if (inserted) p.communicators.emplace_back(trace.str(coll.communicator[r]));
      ck.communicator = ci->second;
      ck.seq = coll.seq[r];
    }
  }
  // Slots: per name, its distinct (device, stream) pairs in increasing order. Stream ids are
  // created in the same order on every rank of a job, device ids often differ (one GPU per rank).
  std::vector<std::set<std::pair<int32_t, int32_t>>> pairs(p.comm_names.size());
  for (size_t c = 0; c < p.comm.size(); ++c) pairs[p.comm[c].name].insert(kernel_dev_stream[c]);
  for (size_t c = 0; c < p.comm.size(); ++c) {
    const auto& s = pairs[p.comm[c].name];
    p.comm[c].slot = static_cast<int32_t>(std::distance(s.begin(), s.find(kernel_dev_stream[c])));
  }
  return p;
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

  // Rank numbers: all from the trace if distinct, else all from file names if distinct, else the
  // order given.
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
  AssignHosts(r, order, file_names, options);
  if (n < 2) return r;

  // Collective names across ranks; per rank, per (name, slot), its kernels in start order.
  std::map<std::string, int32_t> global;
  using Key = std::pair<int32_t, int32_t>;  // (global name, slot)
  std::vector<std::map<Key, std::vector<const CommKernel*>>> lists(n);
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
  std::set<Key> keys;
  for (const auto& l : lists) {
    for (const auto& [key, v] : l) keys.insert(key);
  }

  // Match the k-th kernel of every (name, slot) across ranks; counts that differ leave the tail
  // unmatched (a profiler window that starts or stops at a different step on some rank).
  struct Match {
    Key key;
    int64_t k;
    std::vector<const CommKernel*> at;  // per rank
  };
  std::vector<Match> matches;
  // By (communicator, sequence number) when every communication kernel of every rank has one and
  // no rank has two kernels for one: the trace says which collective each kernel was.
  size_t with_seq = 0, total = 0;
  for (size_t ri = 0; ri < n; ++ri) {
    for (const CommKernel& c : r.ranks[ri].profile->comm) {
      ++total;
      with_seq += c.seq >= 0;
    }
  }
  using SeqKey = std::pair<std::string, int64_t>;
  std::vector<std::map<SeqKey, const CommKernel*>> by_seq(n);
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
  r.matched_by_sequence = sequence;
  if (sequence) {
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
      Match& m = matches.emplace_back();
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
    keys.clear();  // the order matching below has nothing left to do
  }
  for (const Key& key : keys) {
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t ri = 0; ri < n; ++ri) {
      auto it = lists[ri].find(key);
      const size_t count = it == lists[ri].end() ? 0 : it->second.size();
      lo = std::min(lo, count);
      hi = std::max(hi, count);
    }
    if (lo != hi) {
      std::string counts;
      for (size_t ri = 0; ri < n; ++ri) {
        auto it = lists[ri].find(key);
        const size_t count = it == lists[ri].end() ? 0 : it->second.size();
        r.unmatched += static_cast<int64_t>(count - lo);
        counts += fmt::format("{}rank {}: {}", ri ? ", " : "", r.ranks[ri].rank, count);
      }
      r.unmatched_notes.push_back(fmt::format("{} (stream slot {}): {}; the first {} matched",
                                              r.names[key.first], key.second, counts, lo));
    }
    for (size_t k = 0; k < lo; ++k) {
      Match& m = matches.emplace_back();
      m.key = key;
      m.k = static_cast<int64_t>(k);
      for (size_t ri = 0; ri < n; ++ri) m.at.push_back(lists[ri][key][k]);
    }
  }
  if (matches.empty()) {
    r.notes.push_back(
        "no collective runs on every rank the same number of times: clocks are not aligned and "
        "waiting is not separated from transfer");
    return r;
  }

  // Clock alignment: the ranks of a collective finish it nearly together (none can finish before
  // the last one's data arrives), so a clock's offset to the reference (lowest) rank is the median
  // difference of matched end times, over every rank on that clock (a host's ranks share one);
  // what is left is the residual.
  r.aligned = true;
  std::vector<DurationNs> own(n, 0);  // per rank: its median |end difference| left
  for (size_t h = 0; h < r.hosts.size(); ++h) {
    HostClock& host = r.hosts[h];
    std::vector<DurationNs> d;
    for (int ri : host.ranks) {
      if (ri == 0) continue;
      for (const Match& m : matches) d.push_back(m.at[ri]->end_ns - m.at[0]->end_ns);
    }
    host.end_pairs = static_cast<int64_t>(d.size());
    if (d.empty()) continue;  // the reference rank alone: its own clock, offset 0
    const DurationNs offset = MedianNs(d);
    std::vector<DurationNs> raw = d;
    for (DurationNs& x : raw) x = std::abs(x);
    std::vector<DurationNs> left = d;
    for (DurationNs& x : left) x = std::abs(x - offset);
    host.estimated_offset_ns = offset;
    host.residual_ns = MedianNs(left);
    // The reference rank's host shares its clock. Elsewhere, an offset the end times cannot tell
    // from zero is not applied: the clocks are taken as comparable (without hosts, ranks may
    // share one), which keeps their own skew.
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
      for (const Match& m : matches) {
        e.push_back(std::abs(m.at[ri]->end_ns - m.at[0]->end_ns - host.offset_ns));
      }
      s.residual_ns = MedianNs(e);
    }
    // Ranks said to share a host whose own clocks disagree by more than their own end-time
    // scatter explains were probably not on one host (e.g. containers that all call themselves
    // "vm"): the pooled offset then fits none of them, and the residual shows it; say why.
    if (r.host_source != HostSource::kNone && host.ranks.size() >= 2) {
      DurationNs lo = INT64_MAX, hi = INT64_MIN, scatter = 0;
      for (int ri : host.ranks) {
        std::vector<DurationNs> own;
        for (const Match& m : matches) {
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
  }

  // Waiting: a rank that starts a collective before the last rank arrives waits for it. The last
  // rank's lead (how much later than the next-latest it started) is kept per rank to check it
  // against the clocks' residual below.
  std::vector<std::vector<DurationNs>> leads(n);
  std::vector<std::set<int>> runner_up_hosts(n);  // hosts of the next-latest ranks
  for (Match& m : matches) {
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
  // A lead the clocks cannot resolve names no one: the rank may only look late. Its lead is
  // checked against its host's residual and that of the hosts of the ranks it was compared with
  // (the next-latest); without hosts, against the largest residual of any rank.
  if (r.straggler >= 0) {
    const size_t st = static_cast<size_t>(r.straggler);
    DurationNs residual = 0;
    if (r.host_source == HostSource::kNone) {
      for (const RankStats& s : r.ranks) residual = std::max(residual, s.residual_ns);
    } else {
      residual = r.hosts[r.ranks[st].host].residual_ns;
      for (int h : runner_up_hosts[st]) residual = std::max(residual, r.hosts[h].residual_ns);
    }
    const DurationNs lead = MedianNs(leads[st]);
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
  return r;
}

void AddRanksSection(const RanksResult& result, Report& report) {
  Section& s = report.AddSection("ranks", "Ranks", -1);
  const size_t n = result.ranks.size();
  s.AddFact("ranks", "Ranks given", static_cast<int64_t>(n), Unit::kCount);
  if (n == 0) return;
  s.AddFact("rank_source", "Rank numbers from",
            std::string(RankSourceName(result.ranks[0].source)));
  int32_t world = 0;
  for (const RankStats& r : result.ranks) world = std::max(world, r.profile->world_size);
  if (world > 0)
    s.AddFact("world_size", "World size (from the trace)", int64_t{world}, Unit::kCount);
  DurationNs total_wait = 0, total_collective = 0;
  for (const RankStats& r : result.ranks) {
    total_wait += r.wait_ns;
    total_collective += r.collective_ns;
  }
  if (n >= 2) {
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

  if (n < 2) {
    const RankStats& r = result.ranks[0];
    s.notes.push_back(fmt::format(
        "one rank given (rank {}{}): per-rank communication only; skew, waiting and the "
        "straggler need the traces of two or more ranks (sightline analyze r0 r1 ...)",
        r.rank, world > 0 ? fmt::format(" of {}", world) : std::string()));
  }

  if (!result.collectives.empty()) {
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
      c.rows.push_back({result.names[m.name], int64_t{m.slot}, m.ordinal,
                        m.aligned_start_ns - first, int64_t{result.ranks[m.last].rank}, m.skew_ns,
                        m.max_wait_ns});
    }
    c.total_rows = static_cast<int64_t>(result.collectives.size());
    c.note =
        "Skew: latest minus earliest start across ranks after clock alignment; Start: since the "
        "first matched collective, on the lowest rank's clock; #: the collective's sequence number "
        "in "
        "its process group when matched by it, else the k-th kernel of that name on that stream "
        "slot.";
  }
  if (with_hosts && n >= 2) {
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
      h.rows.push_back({host.name, ranks, host.offset_ns, host.estimated_offset_ns,
                        host.residual_ns, host.end_pairs});
    }
    h.note = fmt::format(
        "Hosts from the {}. The ranks of a host share its clock: one offset to rank {} (the "
        "median of all its ranks' end-time differences at matched collectives, applied when "
        "larger than the residual; the reference rank's host: none) and one residual (the "
        "median |difference| left), which a straggler's lead must exceed.",
        HostSourceName(result.host_source), result.ranks[0].rank);
  }
  if (result.aligned) {
    if (!with_hosts) {
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
    DurationNs med_dur = 0;
    {
      std::vector<DurationNs> d;
      for (const RankStats& r : result.ranks) {
        if (r.collectives > 0) d.push_back(r.collective_ns / r.collectives);
      }
      med_dur = MedianNs(d);
    }
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
  for (const std::string& u : result.unmatched_notes) s.notes.push_back("not matched: " + u);
  for (const std::string& note : result.notes) s.notes.push_back(note);
}

namespace {

// Ranks as a multi-trace analysis: a compact profile per member while its trace is loaded, then
// the side-by-side section, and the ranks result for the straggler rule.
class RanksAnalysis : public MultiTraceAnalysis {
 public:
  explicit RanksAnalysis(const AnalyzeOptions& options) {
    options_.ranks_per_host = options.ranks_per_host;
  }

  Status Add(const std::shared_ptr<AnalysisContext>& context,
             const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(std::string blob, Reduce(context, member));
    return AddReduced(blob, member);
  }
  bool Reducible() const override { return true; }
  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& context,
                               const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RankProfile profile, ComputeRankProfile(*context, member.label, member.input));
    return EncodeRankProfile(profile);
  }
  Status AddReduced(const std::string& blob, const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RankProfile profile, DecodeRankProfile(blob));
    profile.input = member.input;  // the index in process 0's report
    profiles_.push_back(std::move(profile));
    paths_.push_back(member.path);
    return Status::Ok();
  }

  Status Finish(const TraceSet& set, Report& report, ResultsCache& results) override {
    // Several inputs are the ranks of one job; one input gets the per-rank view when it says it is
    // one rank of several.
    if (profiles_.size() < 2 && !(profiles_.size() == 1 && profiles_[0].world_size > 1)) {
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(RanksResult ranks, ComputeRanks(profiles_, paths_, options_));
    AddRanksSection(ranks, report);
    results.Put(std::move(ranks));  // for the straggler rule; it points into profiles_
    return Status::Ok();
  }

 private:
  RanksOptions options_;
  std::vector<RankProfile> profiles_;
  std::vector<std::string> paths_;
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateRanksAnalysis(const AnalyzeOptions& options) {
  return std::make_unique<RanksAnalysis>(options);
}

}  // namespace sightline
