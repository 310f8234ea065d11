// Rule sibling_gemms: two launches of the same GEMM kernel with the same grid and block, back to
// back on a stream, recurring (per layer, per step): the shape of two projections of one input —
// the FC and gate GEMMs of a gated MLP, or Q, K and V — that one GEMM over concatenated weights
// does with one read of the input and one launch less (the TensorRT-LLM talk's gated-MLP fusion,
// examples/case_studies/gated_mlp). kernel_chain looks for chains of short kernels instead; these
// GEMMs are long. docs/analyses/findings.md, "sibling_gemms".
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analyses/findings/findings.h"
#include "facts/kernel_category.h"

namespace sightline {
namespace {

constexpr DurationNs kSiblingMaxGapNs = 50'000;  // back to back: the next starts within this
constexpr int64_t kSiblingMinCount = 10;
constexpr double kSiblingMinShare = 0.01;  // of all kernel time, the pairs' second launches
constexpr double kGainShare = 0.1;         // of the second launches' time, the estimate
constexpr size_t kSiblingMaxFindings = 3;
constexpr size_t kSiblingSpans = 16;

struct GemmGroup {
  int64_t count = 0;
  DurationNs first_ns = 0, second_ns = 0, gap_ns = 0;
  int64_t first_row = -1;
  std::string grid, block;
  std::vector<FindingSpan> spans;
};

}  // namespace

Status RuleSiblingGemms(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const auto& k = trace.kernels;
  std::unordered_map<int64_t, int64_t> last_on_stream;  // stream key -> row
  std::unordered_map<std::string, GemmGroup> groups;    // name|grid|block
  for (size_t i = 0; i < k.size(); ++i) {
    const int64_t sk = (int64_t{k.device[i]} << 32) | static_cast<uint32_t>(k.stream[i]);
    auto it = last_on_stream.find(sk);
    const int64_t prev = it == last_on_stream.end() ? -1 : it->second;
    last_on_stream[sk] = static_cast<int64_t>(i);
    if (prev < 0 || k.grid[i].Count() <= 0) continue;
    const size_t p = static_cast<size_t>(prev);
    if (k.short_name[p] != k.short_name[i] || !(k.grid[p] == k.grid[i]) ||
        !(k.block[p] == k.block[i])) {
      continue;
    }
    if (c.kernels().Category(k.short_name[i]) != KernelCategory::kGemm) continue;
    if (k.start_ns[i] - k.end_ns[p] > kSiblingMaxGapNs) continue;
    // A third launch of the same kind right after is a run (layers of one shape), not a pair:
    // count each pair once by leaving the next launch to pair with its own successor.
    last_on_stream[sk] = -1;
    const std::string key =
        fmt::format("{}|{}x{}x{}|{}x{}x{}", k.short_name[i].value, k.grid[i].x, k.grid[i].y,
                    k.grid[i].z, k.block[i].x, k.block[i].y, k.block[i].z);
    GemmGroup& g = groups[key];
    if (g.count++ == 0) {
      g.first_row = prev;
      g.grid = fmt::format("{}x{}x{}", k.grid[i].x, k.grid[i].y, k.grid[i].z);
      g.block = fmt::format("{}x{}x{}", k.block[i].x, k.block[i].y, k.block[i].z);
    }
    g.first_ns += k.dur_ns(p);
    g.second_ns += k.dur_ns(i);
    g.gap_ns += std::max<DurationNs>(0, k.start_ns[i] - k.end_ns[p]);
    if (g.spans.size() < kSiblingSpans)
      g.spans.push_back({k.start_ns[p], k.end_ns[i], k.device[i]});
  }
  std::vector<Finding> found;
  for (auto& [key, g] : groups) {
    if (g.count < kSiblingMinCount || g.second_ns < kSiblingMinShare * c.gpu().TotalKernelTimeNs())
      continue;
    const std::string_view name = trace.str(k.short_name[g.first_row]);
    Finding f;
    f.id = "sibling_gemms";
    f.severity = Severity::kLow;
    f.title = fmt::format(
        "Sibling GEMMs: {} runs twice back to back with the same grid, {} times (one GEMM over "
        "concatenated weights if they read the same input)",
        name, g.count);
    f.evidence.push_back({"kernel", "Kernel", std::string(name)});
    f.evidence.push_back({"pairs", "Pairs", g.count, Unit::kCount});
    f.evidence.push_back({"grid", "Grid", g.grid});
    f.evidence.push_back({"block", "Block", g.block});
    f.evidence.push_back(
        {"pair_ns", "Time of the pairs", g.first_ns + g.second_ns, Unit::kDurationNs});
    f.evidence.push_back({"mean_pair_ns", "Mean pair time", (g.first_ns + g.second_ns) / g.count,
                          Unit::kDurationNs});
    f.evidence.push_back({"gap_ns", "Gaps between the two", g.gap_ns, Unit::kDurationNs});
    f.evidence.push_back({"share_pct", "Share of all kernel time",
                          c.gpu().TotalKernelTimeNs() > 0
                              ? 100.0 * (g.first_ns + g.second_ns) / c.gpu().TotalKernelTimeNs()
                              : 0.0,
                          Unit::kPercent});
    f.where = fmt::format("device {}, stream {}, first at {}", k.device[g.first_row],
                          k.stream[g.first_row],
                          FormatDuration(k.start_ns[g.first_row] - trace.begin_ns()));
    f.recommendation =
        "If both GEMMs multiply the same input (FC and gate of a gated MLP, Q/K/V projections), "
        "concatenate their weights and run one GEMM (one read of the input, one launch less, a "
        "larger N for the tensor cores), then split the output in the next kernel (a SwiGLU "
        "kernel for the gated MLP). The gain depends on the GEMM picked for the larger N: "
        "measure it at your token counts (examples/case_studies/gated_mlp).";
    f.estimated_savings_ns = static_cast<DurationNs>(g.gap_ns + kGainShare * g.second_ns);
    for (const FindingSpan& s : g.spans) f.AddSpan(s.start_ns, s.end_ns, s.device);
    f.SortSpans();
    found.push_back(std::move(f));
  }
  std::sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) {
    if (a.estimated_savings_ns != b.estimated_savings_ns) {
      return a.estimated_savings_ns > b.estimated_savings_ns;
    }
    return a.title < b.title;
  });
  if (found.size() > kSiblingMaxFindings) found.resize(kSiblingMaxFindings);
  for (Finding& f : found) out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
