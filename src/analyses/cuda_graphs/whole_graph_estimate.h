// Per-range GPU time inside CUDA graphs traced as a whole (nsys's default --cuda-graph-trace=graph,
// `sightline record --cuda-graph-trace graph`), estimated from the same step run eagerly in the
// same trace (docs/analyses/cuda_graphs.md, "Graphs traced as a whole").
//
// A whole-graph run is one row: its kernels are not in the trace. What the trace does hold is the
// capture: the launch calls made between cudaStreamBeginCapture and cudaStreamEndCapture, each
// inside the host ranges open then (layer_3 > attention), but with no kernel of their own. The
// capture's launches, as a sequence of range paths below the ranges around the whole capture, are
// aligned with the eager launches of each candidate run (a host range holding about as many eager
// launches), as paths below that range; the eager kernels matched give each captured launch a
// duration (the mean over the eager runs that match best). A range's estimated GPU time per
// replay is the sum of its launches' durations: the same definition as a node-traced replay's
// (summed kernel durations), resting on the assumption that a kernel replayed from a graph runs
// about as long as launched eagerly. The graph's median run less the whole sum is the time inside
// a replay between its kernels. A kernel added or left out by the capture counts as unmatched.
//
// A graph is paired with its capture by its creation (Trace::graph_creations, nsys): the capture
// window on the creating thread that holds the creation time. Without creation records, captures
// are paired with graphs per process in order: the k-th capture window (by time) with the k-th
// graph id (ascending, as CUDA numbers graphs in creation order) when the process has as many
// windows as graphs with runs; otherwise its graphs stay unpaired (counted).
//
// A serving loop captures one graph per batch size, and its eager steps of every size have the
// same ranges, so every eager run matches every capture. Given the steps' batch sizes (an
// iteration log, joined to the trace by the analyses: StepBatches), a graph's batch is that of
// the steps holding its runs (the graph batch size the log names, else the largest real batch
// they ran), an eager run's that of the step holding it, and each graph's estimate averages only
// the eager runs of its own batch; when none of them matches, all of them, and the graph says so.
// Input: one Trace (and the steps' batches). Output: per graph, its runs, the pairing, the batch,
// which eager runs, the matched launches and per range path the estimate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

// The batch sizes of a trace's steps, on the trace's clock, from an iteration log (the analyses
// join it: analyses/cuda_graphs/graph_step_batches.h).
struct StepBatches {
  struct Step {
    int32_t pid = -1;  // the process whose step it is; -1: any
    TimeNs start_ns = 0, end_ns = 0;
    int64_t batch = -1;        // sequences the step decoded; -1: the log states none usable
    int64_t graph_batch = -1;  // the captured batch of the graph it replayed; -1: not stated
  };
  std::vector<Step> steps;  // any order
};

// Which eager runs a graph's estimate averages.
enum class EagerSelection {
  kAll,              // no step batches were given: every eager run that matches
  kOfBatch,          // those of the graph's batch size
  kAllNoneOfBatch,   // every one: none of the graph's batch size matches the capture
  kAllGraphUnknown,  // every one: the steps holding the graph's runs state no batch
  kAllNoEagerBatch,  // every one: the eager runs come from a trace the steps are not of
};
const char* EagerSelectionName(EagerSelection selection);  // "of_batch", "all_none_of_batch", ...

// Where a graph's batch size came from.
enum class GraphBatchSource {
  kNone,
  kGraphBatch,  // the graph batch size the steps holding its runs name (the most frequent one)
  kLargestRealBatch,  // the largest real batch of those steps (its captured size is at least that)
};

struct WholeGraphEstimate {
  struct Range {
    std::string path;              // "layer_3 > attention" (below the capture's outer ranges)
    int64_t launches = 0;          // launch calls captured there (nodes of the graph, kernels)
    int64_t matched = 0;           // ... given an eager counterpart
    DurationNs eager_ns = 0;       // the matched launches' eager kernel time, per eager run (mean)
    double share = 0;              // eager_ns / the graph's matched eager time, 0..1
    DurationNs per_replay_ns = 0;  // share x the graph's median run
  };
  struct Graph {
    int64_t graph_id = 0;
    int32_t pid = -1;
    int64_t runs = 0;              // whole-graph rows
    DurationNs median_run_ns = 0;  // their median GPU duration
    bool paired = false;           // a capture window was paired with it
    bool by_creation = false;      // ... by the graph's creation record (else by order)
    TimeNs capture_start_ns = 0, capture_end_ns = 0;
    // The innermost code range around the whole capture on its thread ("capture_bs4"); empty when
    // none.
    std::string capture_range;
    int64_t launches = 0;       // kernel launch calls in the capture
    int64_t matched = 0;        // ... matched with an eager kernel
    int64_t eager_runs = 0;     // eager runs the durations are averaged over
    std::string eager_range;    // the name of the range holding the first of them ("eager_step_0")
    DurationNs eager_ns = 0;    // matched eager kernel time per eager run (mean), all ranges
    std::vector<Range> ranges;  // in capture order
    // The choice of eager runs by batch size (StepBatches given).
    EagerSelection selection = EagerSelection::kAll;
    int64_t batch = -1;  // the graph's batch size; -1: unknown
    GraphBatchSource batch_source = GraphBatchSource::kNone;
    int64_t runs_in_steps = 0;               // its runs inside a step that states a batch
    int64_t runs_other_batch = 0;            // ... a step naming another graph batch than `batch`
    int64_t eager_candidates = 0;            // eager runs matching the capture, before the choice
    std::vector<int64_t> candidate_batches;  // their batch sizes, distinct, ascending; -1: unknown
  };
  std::vector<Graph> graphs;  // by graph id
  int64_t whole_runs = 0;     // whole-graph rows in the trace
  int64_t graphs_paired = 0, graphs_estimated = 0;
  int64_t capture_windows = 0;     // BeginCapture..EndCapture pairs found
  int64_t work_cut = 0;            // candidate runs not compared: the work bound was spent
  bool eager_reference = false;    // the eager runs came from a second trace
  bool step_batches = false;       // step batch sizes were given
  int64_t runs_without_batch = 0;  // whole-graph runs in no step that states a batch
};

// Empty `graphs` when the trace has no whole-graph row. Cost: O(candidates x launches^2) for the
// alignment, bounded in all (work_cut counts what the bound left out). With `eager_reference`, the
// eager runs come from that trace (the same program run eagerly and recorded separately: `analyze
// --eager-reference`) instead of `trace`; the captures and the graphs' runs still come from
// `trace`. With `batches` (steps of `trace`), each graph averages the eager runs of its batch size
// (above); the eager runs of a reference have no step, so there every graph takes all of them.
WholeGraphEstimate EstimateWholeGraphs(const Trace& trace, const Trace* eager_reference = nullptr,
                                       const StepBatches* batches = nullptr);

}  // namespace sightline
