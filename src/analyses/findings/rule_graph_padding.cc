// Rule graph_padding: decode iterations replay a CUDA graph captured for a larger batch than the
// one they run: the runtime pads the batch up to the next captured size, and the padded slots do
// work nobody asked for. Needs an iteration log joined to the trace (--iteration-log;
// analyses/iteration_log/iteration_log_join.h) that gives the real batch of each iteration: its
// generation requests (else its active requests), in iterations without context (prefill) requests.
// The replayed batch is the log's own `graph_batch_size` (or `padded_batch_size`,
// `cuda_graph_batch_size`) where it has one; else, per distinct graph (graph_replays.h), the
// largest real batch it ever ran, which the graph's captured size is at least: padding is then a
// lower bound. The GPU time estimate assumes a replay's time grows in proportion to its batch, an
// upper bound for small decode batches, which mostly read weights. docs/analyses/findings.md,
// "graph_padding".
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "analyses/findings/findings.h"
#include "analyses/iteration_log/iteration_log_batch.h"
#include "analyses/iteration_log/iteration_log_join.h"
#include "base/stats.h"
#include "facts/graph_replays.h"

namespace sightline {
namespace {

constexpr int64_t kMinPaddedIterations = 3;
constexpr double kMinPaddedShare = 0.10;  // of the replayed batch slots
constexpr ptrdiff_t kMaxReplaysPerStep = 1024;
struct Step {
  TimeNs start_ns = 0;
  int64_t real = 0;               // sequences decoded
  std::optional<int64_t> logged;  // the replayed batch the log names
  int32_t variant = -1;           // the graph of its first replay
  DurationNs gpu_ns = 0;          // its replays' summed kernel time
  int64_t replayed = 0;           // the replayed batch used (logged or the graph's bound)
};

}  // namespace

Status RuleGraphPadding(AnalysisContext& c, std::vector<Finding>& out) {
  if (!c.inputs().iteration_log) return Status::Ok();
  const GraphReplays& gr = c.graphs().Replays();
  if (gr.replays.empty()) return Status::Ok();
  const IterationLogJoin& join = *IterationLogJoinOf(c);
  if (join.rows.empty()) return Status::Ok();

  // Replays by launch time (they are sorted so), for a binary search per iteration.
  std::vector<TimeNs> launch;
  for (const GraphReplay& g : gr.replays) {
    launch.push_back(g.launch_ns >= 0 ? g.launch_ns : g.gpu_start_ns);
  }
  std::vector<Step> steps;
  int64_t mixed = 0;
  for (const IterationLogRow& row : join.rows) {
    const IterationLogEntry& e = *row.entry;
    const std::optional<int64_t>& ctx = e.field(IterationLogField::kContextRequests);
    const std::optional<int64_t>& gen = e.field(IterationLogField::kGenerationRequests);
    const std::optional<int64_t>& active = e.field(IterationLogField::kActiveRequests);
    const std::optional<int64_t> real = gen ? gen : active;
    if (!real || *real < 0) continue;
    Step s;
    s.start_ns = row.start_ns;
    s.real = *real;
    s.logged = LoggedBatchOf(e).graph;  // the log's own replayed batch size, where it names one
    auto lo = std::lower_bound(launch.begin(), launch.end(), row.start_ns);
    // Bounded per iteration (log windows may overlap in a hostile log; a step replays a few).
    const auto hi = launch.end() - lo > kMaxReplaysPerStep ? lo + kMaxReplaysPerStep : launch.end();
    for (auto it = lo; it != hi && *it < row.end_ns; ++it) {
      const GraphReplay& g = gr.replays[static_cast<size_t>(it - launch.begin())];
      if (join.set != nullptr && (g.pid != join.set->pid || g.tid != join.set->tid)) continue;
      if (s.variant < 0) s.variant = g.variant;
      s.gpu_ns += g.gpu_ns;
    }
    if (s.variant < 0) continue;  // no replay: an eager step
    if (ctx && *ctx > 0) {        // prefill in the step: its batch is not the decode batch
      ++mixed;
      continue;
    }
    steps.push_back(s);
  }
  if (steps.empty()) return Status::Ok();
  // Without a logged size: each graph ran batches up to its captured size, so that size is at
  // least the largest real batch it ran.
  std::vector<int64_t> bound(gr.variants.size(), 0);
  for (const Step& s : steps) bound[s.variant] = std::max(bound[s.variant], s.real);
  int64_t logged = 0, slots = 0, padded_slots = 0, padded = 0;
  double waste_ns = 0;
  DurationNs padded_gpu_ns = 0;
  std::vector<int64_t> reals, replayed;
  Finding f;
  for (Step& s : steps) {
    s.replayed = s.logged ? *s.logged : bound[s.variant];
    logged += s.logged.has_value();
    reals.push_back(s.real);
    replayed.push_back(s.replayed);
    if (s.replayed <= 0) continue;
    slots += s.replayed;
    const int64_t pad = s.replayed - s.real;
    if (pad <= 0) continue;
    ++padded;
    padded_slots += pad;
    padded_gpu_ns += s.gpu_ns;
    waste_ns +=
        static_cast<double>(s.gpu_ns) * static_cast<double>(pad) / static_cast<double>(s.replayed);
  }
  if (padded < kMinPaddedIterations || slots <= 0 ||
      static_cast<double>(padded_slots) < kMinPaddedShare * static_cast<double>(slots)) {
    return Status::Ok();
  }
  const bool all_logged = logged == static_cast<int64_t>(steps.size());
  const auto waste = static_cast<DurationNs>(waste_ns);
  f.id = "graph_padding";
  f.severity = static_cast<double>(padded_slots) >= 0.3 * static_cast<double>(slots)
                   ? Severity::kMedium
                   : Severity::kLow;
  f.title = fmt::format(
      "Padded CUDA graph replays: {} of {} decode iterations replay a graph for more sequences "
      "than they decode ({} of the replayed batch slots are padding{})",
      padded, steps.size(), Percent(static_cast<double>(padded_slots), static_cast<double>(slots)),
      all_logged ? "" : ", at least");
  f.evidence.push_back({"iterations", "Decode iterations with a graph replay (log joined)",
                        static_cast<int64_t>(steps.size()), Unit::kCount});
  f.evidence.push_back({"padded_iterations", "Of them padded", padded, Unit::kCount});
  f.evidence.push_back(
      {"median_real_batch", "Median real batch (log)", Median(reals), Unit::kNumber});
  f.evidence.push_back(
      {"median_replayed_batch",
       all_logged ? "Median replayed batch (log)" : "Median replayed batch (log or at least)",
       Median(replayed), Unit::kNumber});
  f.evidence.push_back({"padded_slots_pct", "Padding, of replayed batch slots",
                        100.0 * static_cast<double>(padded_slots) / static_cast<double>(slots),
                        Unit::kPercent});
  f.evidence.push_back({"padded_replay_gpu_ns", "GPU time of the padded iterations' replays",
                        padded_gpu_ns, Unit::kDurationNs});
  f.evidence.push_back({"padding_gpu_upper_ns",
                        "Of it for padding, at most (time in proportion to the batch)", waste,
                        Unit::kDurationNs});
  f.evidence.push_back(
      {"replayed_batch_source", "Replayed batch from",
       all_logged ? std::string("the log's graph batch size")
       : logged > 0
           ? fmt::format("the log's graph batch size in {} iterations, else each graph's "
                         "largest real batch (a lower bound)",
                         logged)
           : std::string("each graph's largest real batch (a lower bound: the log names no "
                         "graph_batch_size)")});
  if (mixed > 0) {
    f.evidence.push_back(
        {"mixed_iterations", "Iterations with prefill left out", mixed, Unit::kCount});
  }
  f.where = fmt::format("iterations joined by {} ({} log lines); first padded at {}",
                        IterationLogJoinMethodName(join.method), join.rows.size(), [&] {
                          for (const Step& s : steps) {
                            if (s.replayed > s.real) {
                              return FormatDuration(s.start_ns - c.trace().begin_ns());
                            }
                          }
                          return std::string("?");
                        }());
  f.recommendation =
      "The runtime pads each decode batch up to the next captured graph size. Capture sizes "
      "where the real batches fall (the sizes just below each bucket that the log shows most), "
      "or keep the batch full at a captured size (concurrency, max_num_seqs); vLLM: "
      "cudagraph_capture_sizes; TensorRT-LLM: cuda_graph_config.batch_sizes (enable_padding); "
      "SGLang: cuda_graph_bs. Padding costs little while decode is bound by reading the weights "
      "(small batches) and up to its share of the batch once the GEMMs are compute-bound; each "
      "size added costs a capture (graph_variants).";
  f.estimated_savings_ns = waste;
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
