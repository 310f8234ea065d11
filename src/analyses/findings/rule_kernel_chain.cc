// Rule kernel_chain: the same short sequence of short kernels recurring back to back on a stream
// (per layer, per step): candidates for fusion into one kernel. docs/analyses/findings.md,
// "kernel_chain".
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>

#include "analyses/findings/findings.h"

namespace sightline {
namespace {

constexpr int kLen = 4;                      // kernels per chain
constexpr DurationNs kMaxKernelNs = 20'000;  // "short" kernels
// Consecutive: the next kernel starts within this (in a launch-bound loop, gaps are launch gaps).
constexpr DurationNs kChainMaxGapNs = 50'000;
constexpr int64_t kChainMinCount = 10;
constexpr double kChainMinShare = 0.01;  // of all kernel time (the saving)
constexpr size_t kChainMaxFindings = 3;
constexpr size_t kChainSpans =
    16;  // occurrences annotated per chain (memory grows with distinct chains)

using Key = std::array<uint32_t, kLen>;
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t v : k) h = (h ^ v) * 0x100000001b3ull;
    return h;
  }
};
struct ChainStats {
  int64_t count = 0;
  DurationNs kernel_ns = 0;   // summed member durations
  DurationNs longest_ns = 0;  // summed per-occurrence longest member
  DurationNs gap_ns = 0;      // summed gaps between members
  int64_t first_row = -1;     // first member of the first occurrence
  int32_t device = 0, stream = 0;
  // Per stream, the last member of the last occurrence counted: a chain that repeats within its
  // own length (A B A B in a run of A B A B A B) would otherwise count each kernel twice, and its
  // kernel time would pass the trace's.
  std::unordered_map<int64_t, int64_t> last_row;
  std::vector<FindingSpan> first;  // the first kChainSpans occurrences (timeline annotations)
};
struct StreamState {
  std::array<uint32_t, kLen> rows{};  // ring of the run's last kernel rows
  int len = 0;                        // kernels in the current run (capped at kLen)
  int head = 0;
  TimeNs last_end = 0;  // the first kernel of a stream starts a run (len is 0)
};

}  // namespace

Status RuleKernelChain(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const auto& k = trace.kernels;
  std::unordered_map<int64_t, StreamState> streams;
  std::unordered_map<Key, ChainStats, KeyHash> chains;
  // Kernels come in runs on one stream: the last stream's state is looked up once per run
  // (unordered_map keeps references to its elements valid as it grows).
  int64_t last_stream = 0;
  StreamState* last_state = nullptr;
  for (size_t i = 0; i < k.size(); ++i) {
    const int64_t stream_key = (int64_t{k.device[i]} << 32) | static_cast<uint32_t>(k.stream[i]);
    if (last_state == nullptr || stream_key != last_stream) {
      last_state = &streams[stream_key];
      last_stream = stream_key;
    }
    StreamState& s = *last_state;
    if (k.dur_ns(i) > kMaxKernelNs || k.start_ns[i] - s.last_end > kChainMaxGapNs) s.len = 0;
    s.last_end = std::max(s.last_end, k.end_ns[i]);
    if (k.dur_ns(i) > kMaxKernelNs) continue;
    s.rows[s.head] = static_cast<uint32_t>(i);
    s.head = (s.head + 1) % kLen;
    if (s.len < kLen) ++s.len;
    if (s.len < kLen) continue;
    Key key;
    bool all_same = true;
    DurationNs sum = 0, longest = 0, gaps = 0;
    for (int j = 0; j < kLen; ++j) {
      const uint32_t r = s.rows[(s.head + j) % kLen];  // oldest first
      key[j] = k.short_name[r].value;
      all_same &= key[j] == key[0];
      sum += k.dur_ns(r);
      longest = std::max(longest, k.dur_ns(r));
      if (j > 0)
        gaps += std::max<DurationNs>(0, k.start_ns[r] - k.end_ns[s.rows[(s.head + j - 1) % kLen]]);
    }
    if (all_same) continue;
    ChainStats& cs = chains[key];
    const auto [last, first_on_stream] = cs.last_row.try_emplace(stream_key, -1);
    if (!first_on_stream && s.rows[s.head % kLen] <= last->second) continue;  // overlaps
    last->second = static_cast<int64_t>(i);
    if (cs.count++ == 0) {
      cs.first_row = s.rows[s.head % kLen];
      cs.device = k.device[i];
      cs.stream = k.stream[i];
    }
    if (cs.first.size() < kChainSpans) {
      cs.first.push_back({k.start_ns[s.rows[s.head % kLen]], k.end_ns[i], k.device[i]});
    }
    cs.kernel_ns += sum;
    cs.longest_ns += longest;
    cs.gap_ns += gaps;
  }

  std::vector<std::pair<const Key*, const ChainStats*>> found;
  for (const auto& [key, cs] : chains) {
    if (cs.count < kChainMinCount) continue;
    if (cs.kernel_ns - cs.longest_ns < kChainMinShare * c.gpu().TotalKernelTimeNs()) continue;
    found.push_back({&key, &cs});
  }
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    const DurationNs sa = a.second->kernel_ns - a.second->longest_ns;
    const DurationNs sb = b.second->kernel_ns - b.second->longest_ns;
    if (sa != sb) return sa > sb;
    return *a.first < *b.first;
  });
  // Shifted windows of one longer chain look alike: keep chains that share at most half their
  // kernels with one already reported.
  std::vector<const Key*> kept;
  for (const auto& [key, cs] : found) {
    if (kept.size() >= kChainMaxFindings) break;
    bool similar = false;
    for (const Key* other : kept) {
      int shared = 0;
      for (uint32_t v : *key) shared += std::count(other->begin(), other->end(), v) > 0;
      similar |= shared > kLen / 2;
    }
    if (similar) continue;
    kept.push_back(key);
    std::string names;
    for (int j = 0; j < kLen; ++j) {
      names += fmt::format("{}{}", j ? " -> " : "", trace.str(StringId{(*key)[j]}));
    }
    const DurationNs saving = cs->kernel_ns - cs->longest_ns;
    Finding f;
    f.id = "kernel_chain";
    f.severity = saving >= 0.05 * c.gpu().TotalKernelTimeNs() ? Severity::kMedium : Severity::kLow;
    f.title = fmt::format("Fusion candidate: a chain of {} short kernels recurs {} times ({})",
                          kLen, cs->count, FormatDuration(cs->kernel_ns));
    f.evidence.push_back({"chain", "Chain", names});
    f.evidence.push_back({"occurrences", "Occurrences", cs->count, Unit::kCount});
    f.evidence.push_back({"kernel_ns", "Kernel time", cs->kernel_ns, Unit::kDurationNs});
    f.evidence.push_back(
        {"mean_chain_ns", "Mean chain kernel time", cs->kernel_ns / cs->count, Unit::kDurationNs});
    f.evidence.push_back({"gap_ns", "Gaps inside the chain", cs->gap_ns, Unit::kDurationNs});
    f.evidence.push_back({"share_pct", "Share of all kernel time",
                          c.gpu().TotalKernelTimeNs() > 0
                              ? 100.0 * cs->kernel_ns / c.gpu().TotalKernelTimeNs()
                              : 0.0,
                          Unit::kPercent});
    f.where = fmt::format("device {}, stream {}, first at {}", cs->device, cs->stream,
                          FormatDuration(k.start_ns[cs->first_row] - trace.begin_ns()));
    f.recommendation =
        "Fuse the chain into one kernel (torch.compile / Inductor, a hand-written or Triton "
        "kernel, TensorRT/Myelin fusion, fused residual-add + RMSNorm or fused activation-"
        "quantization kernels): one pass over the data instead of one per kernel, and fewer "
        "launches.";
    f.estimated_savings_ns = saving;
    for (const FindingSpan& span : cs->first) f.AddSpan(span.start_ns, span.end_ns, span.device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
