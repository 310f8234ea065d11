// A serving loop that replays CUDA graphs of four batch sizes (issue 29), recorded on an H200
// (examples/graph_decode/graph_serve.py, record_serve.sh; docs/evidence/cuda-graphs/serve/): the
// decode step captured once per bucket (1, 2, 4, 8 sequences, each capture inside `capture_bsB`,
// ranges embed, layer_i > attention / mlp, head), 40 steps whose real batch (3, 8, 5, 1, 6, 2, 7,
// 4, repeated) is padded to a bucket, then 8 eager steps (2 per bucket). The truth is the
// program's: 279 kernels per step in every bucket (embed 2, attention 18, mlp 15, head 13), bucket
// 8 replayed 20 times, 4 10 times, 2 and 1 5 times each; 20 of 40 steps padded, 35 of 215 replayed
// slots. Files: nsys --cuda-graph-trace=node (graph_serve_node_h200), nsys graph mode without the
// eager steps (graph_serve_graph_only_h200) and an eager-only run of the program
// (graph_serve_eager_only_h200), the recorder in graph mode (graph_serve_graph_h200.slrec.gz),
// and the runs' iteration logs.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/cuda_graphs/graph_step_batches.h"
#include "analyses/cuda_graphs/whole_graph_estimate.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "facts/graph_kernel_paths.h"
#include "importers/importer.h"
#include "importers/iteration_log/iteration_log.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/status.h"

namespace sightline {
namespace {

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/";
const std::string kNode = kData + "nsys/graph_serve_node_h200.sqlite.gz";
const std::string kGraphOnly = kData + "nsys/graph_serve_graph_only_h200.sqlite.gz";
const std::string kEagerOnly = kData + "nsys/graph_serve_eager_only_h200.sqlite.gz";
// The node export less its capture points and eager kernels (tests/data/nsys/README.md).
const std::string kNoCapture = kData + "nsys/graph_serve_node_no_capture_no_eager_h200.sqlite.gz";
const std::string kRecorderGraph = kData + "recorder/graph_serve_graph_h200.slrec.gz";
const std::string kRecorderGraphLog = kData + "recorder/graph_serve_graph_h200.iterations.jsonl";

const std::map<int, int> kReplays = {{1, 5}, {2, 5}, {4, 10}, {8, 20}};

// The node-traced replays, per bucket and range below capture_bsB: {bucket: {path: row}}.
std::map<int, std::map<std::string, CaptureRangeRow>> Measured(const Trace& trace) {
  const CudaGraphsResult g = ComputeCudaGraphs(trace);
  std::map<int, std::map<std::string, CaptureRangeRow>> out;
  const std::regex path(R"(capture_bs(\d+) > (.*))");
  for (const CaptureRangeRow& r : g.rows) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(r.path, m, path)) << r.path;
    out[std::stoi(m[1])][m[2]] = r;
  }
  return out;
}

// Every replayed kernel is given to exactly one of embed, layer_i > attention | mlp, head below
// its bucket's capture range, and per range a replay holds the eager step's kernels.
TEST(GraphServe, EachBucketsReplaysHoldTheEagerStepsKernelsPerRange) {
  StatusOr<Trace> node = ImportTrace(kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const CudaGraphsResult g = ComputeCudaGraphs(*node);
  EXPECT_EQ(g.graph_launches, 40);
  EXPECT_EQ(g.graph_kernels, 40 * 279);
  EXPECT_EQ(g.with_capture, g.graph_kernels);
  EXPECT_EQ(g.in_ranges, g.graph_kernels);
  const auto measured = Measured(*node);
  ASSERT_EQ(measured.size(), 4u);
  const std::regex leaf(R"(embed|head|layer_[0-7] > (attention|mlp))");
  const std::map<std::string, int> per_part = {
      {"embed", 2}, {"attention", 18}, {"mlp", 15}, {"head", 13}};
  int64_t kernels = 0;
  for (const auto& [bucket, rows] : measured) {
    EXPECT_EQ(rows.size(), 18u) << bucket;  // embed, 8 x (attention, mlp), head
    int64_t per_replay = 0;
    for (const auto& [path, row] : rows) {
      EXPECT_TRUE(std::regex_match(path, leaf)) << path;
      const std::string part = path.substr(path.rfind(' ') + 1);
      EXPECT_EQ(row.nodes, per_part.at(part)) << bucket << " " << path;
      EXPECT_DOUBLE_EQ(row.replays, kReplays.at(bucket)) << bucket << " " << path;
      // The eager steps (of every bucket: the ranges of the same names) launch as many.
      EXPECT_EQ(row.eager_instances, 8) << path;
      EXPECT_DOUBLE_EQ(row.eager_kernels_per_instance, static_cast<double>(row.nodes)) << path;
      per_replay += row.nodes;
      kernels += row.kernels;
    }
    EXPECT_EQ(per_replay, 279) << bucket;
  }
  EXPECT_EQ(kernels, g.graph_kernels);  // each kernel in one row
}

// graph_variants and graph_padding on real data, with the run's iteration log (its
// graph_batch_size and generation_requests): the program's numbers.
TEST(GraphServe, GraphVariantsAndPaddingGiveTheProgramsNumbers) {
  for (const auto& [trace, log] :
       {std::pair(kNode, kData + "nsys/graph_serve_node_h200.iterations.jsonl"),
        std::pair(kRecorderGraph, kData + "recorder/graph_serve_graph_h200.iterations.jsonl")}) {
    testing::CliResult r =
        testing::RunSightline("analyze '" + trace + "' --iteration-log '" + log + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("4 distinct CUDA graphs replayed (40 replays; 0 replayed at most once)"),
              std::string::npos)
        << trace;
    // 20 of 40 steps ran a larger bucket; 35 of 215 replayed slots were padding (16.3%).
    EXPECT_NE(r.out.find("20 of 40 decode iterations replay a graph for more sequences than they "
                         "decode (16.3% of the replayed batch slots are padding)"),
              std::string::npos)
        << trace;
  }
}

// The recorder traced the graphs as a whole: each of the four graphs pairs with its own bucket's
// capture by its creation records (the runs carry the executable graph's id, 2, 5, 8, 11, whose
// instantiation leads to the graph each capture created), and its estimate is held against the
// node-traced replays of that bucket (another run of the program).
TEST(GraphServe, RecorderWholeGraphsPairWithTheirOwnCaptureByCreation) {
  StatusOr<Trace> whole = ImportTrace(kRecorderGraph);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  StatusOr<Trace> node = ImportTrace(kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const auto measured = Measured(*node);
  const WholeGraphEstimate e = EstimateWholeGraphs(*whole);
  EXPECT_EQ(e.whole_runs, 40);
  EXPECT_EQ(e.capture_windows, 4);
  ASSERT_EQ(e.graphs.size(), 4u);
  const std::map<int64_t, int> bucket_of = {{2, 8}, {5, 4}, {8, 2}, {11, 1}};
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    ASSERT_EQ(bucket_of.count(g.graph_id), 1u) << g.graph_id;
    const int bucket = bucket_of.at(g.graph_id);
    EXPECT_TRUE(g.paired) << g.graph_id;
    EXPECT_TRUE(g.by_creation) << g.graph_id;
    EXPECT_EQ(g.capture_range, "capture_bs" + std::to_string(bucket));
    EXPECT_EQ(g.runs, kReplays.at(bucket));
    EXPECT_EQ(g.launches, 279);
    EXPECT_EQ(g.matched, 279);
    EXPECT_EQ(g.eager_runs, 8);
    // Estimated from the eager steps of every bucket (their ranges are the same), against the
    // measured replays of this bucket: -8% (bucket 8) to +4% (bucket 1) on this run.
    DurationNs truth = 0;
    for (const auto& [path, row] : measured.at(bucket)) truth += row.per_replay_ns;
    EXPECT_NEAR(static_cast<double>(g.eager_ns), static_cast<double>(truth), 0.10 * truth)
        << g.graph_id;
    ASSERT_EQ(g.ranges.size(), 18u);
    for (const WholeGraphEstimate::Range& r : g.ranges) {
      EXPECT_EQ(r.launches, measured.at(bucket).at(r.path).nodes) << r.path;
    }
  }
}

// With the run's iteration log, each graph's batch is its bucket (the log's graph_batch_size), and
// its estimate takes the eager runs of that batch where the log holds the eager steps (as
// graph_serve.py writes it now: two eager steps per bucket, no graph_batch_size); in a log of the
// graph steps alone (the shipped recording's) no eager run has a batch, so every graph takes all
// eight, and says so.
TEST(GraphServe, WithTheIterationLogEachGraphTakesTheEagerRunsOfItsBucket) {
  StatusOr<Trace> whole = ImportTrace(kRecorderGraph);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  StatusOr<Trace> node = ImportTrace(kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const auto measured = Measured(*node);
  StatusOr<IterationLog> log = ReadIterationLog(kRecorderGraphLog);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  // The recording logs the eager steps too (graph_serve.py since session 19): 48 steps.
  RunInputs inputs;
  inputs.iteration_log = std::make_shared<IterationLog>(std::move(*log));
  const auto context = testing::Ctx(*whole, {}, inputs);
  const std::optional<GraphStepBatches> sb = GraphStepBatchesFromLog(*context);
  ASSERT_TRUE(sb.has_value());
  EXPECT_EQ(sb->join, "iteration counter");
  EXPECT_EQ(sb->steps, 48);
  EXPECT_EQ(sb->with_graph, 40);
  EXPECT_EQ(sb->without_batch, 0);
  const WholeGraphEstimate e = EstimateWholeGraphs(*whole, nullptr, &sb->batches);
  EXPECT_EQ(e.runs_without_batch, 0);
  ASSERT_EQ(e.graphs.size(), 4u);
  std::map<int, DurationNs> estimate_by_bucket;
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    ASSERT_EQ(g.capture_range.rfind("capture_bs", 0), 0u) << g.capture_range;
    const int bucket = std::stoi(g.capture_range.substr(10));
    EXPECT_EQ(g.batch, bucket) << g.graph_id;
    EXPECT_EQ(g.batch_source, GraphBatchSource::kGraphBatch);
    EXPECT_EQ(g.runs_in_steps, kReplays.at(bucket));
    EXPECT_EQ(g.runs_other_batch, 0);
    EXPECT_EQ(g.eager_candidates, 8);
    EXPECT_EQ(g.matched, 279);
    EXPECT_EQ(g.selection, EagerSelection::kOfBatch) << g.graph_id;
    EXPECT_EQ(g.eager_runs, 2) << g.graph_id;  // the two eager steps of its bucket
    DurationNs truth = 0;
    for (const auto& [path, row] : measured.at(bucket)) truth += row.per_replay_ns;
    EXPECT_NEAR(static_cast<double>(g.eager_ns), static_cast<double>(truth), 0.10 * truth)
        << g.graph_id;
    estimate_by_bucket[bucket] = g.eager_ns;
  }
  // A larger batch does more work per replay; one estimate for all buckets (the eager runs of
  // every batch averaged) would not order them.
  ASSERT_EQ(estimate_by_bucket.size(), 4u);
  EXPECT_LT(estimate_by_bucket.at(1), estimate_by_bucket.at(2));
  EXPECT_LT(estimate_by_bucket.at(2), estimate_by_bucket.at(4));
  EXPECT_LT(estimate_by_bucket.at(4), estimate_by_bucket.at(8));
}

// A graph-only trace holds no eager run; the eager-only run of the program, recorded separately,
// estimates it (`analyze --eager-reference`), each graph paired with its own capture by nsys's
// creation records.
TEST(GraphServe, AnEagerOnlyTraceEstimatesAGraphOnlyTrace) {
  StatusOr<Trace> graphs = ImportTrace(kGraphOnly);
  ASSERT_TRUE(graphs.ok()) << graphs.status().ToString();
  StatusOr<Trace> eager = ImportTrace(kEagerOnly);
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  const WholeGraphEstimate alone = EstimateWholeGraphs(*graphs);
  ASSERT_EQ(alone.graphs.size(), 4u);
  EXPECT_EQ(alone.graphs_paired, 4);
  EXPECT_EQ(alone.graphs_estimated, 0);
  const WholeGraphEstimate e = EstimateWholeGraphs(*graphs, &*eager);
  EXPECT_TRUE(e.eager_reference);
  EXPECT_EQ(e.graphs_estimated, 4);
  const std::map<int64_t, int> bucket_of = {{1, 8}, {4, 4}, {7, 2}, {10, 1}};
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    EXPECT_TRUE(g.by_creation) << g.graph_id;
    EXPECT_EQ(g.capture_range, "capture_bs" + std::to_string(bucket_of.at(g.graph_id)));
    EXPECT_EQ(g.matched, 279);
    EXPECT_EQ(g.eager_runs, 8);
    // The eager-only run's first step: `eager_step_0`, or `step_0` in recordings whose steps
    // share one counter (graph_serve.py logs the eager steps too).
    EXPECT_TRUE(g.eager_range == "eager_step_0" || g.eager_range == "step_0") << g.eager_range;
  }

  testing::CliResult r =
      testing::RunSightline("analyze '" + kGraphOnly + "' --eager-reference '" + kEagerOnly + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("estimates from the eager runs of the eager reference trace"),
            std::string::npos);
  testing::CliResult plain = testing::RunSightline("analyze '" + kGraphOnly + "'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("can be given with --eager-reference"), std::string::npos);
  // Not a trace, or nothing to estimate: a usage error.
  testing::CliResult log =
      testing::RunSightline("analyze '" + kGraphOnly + "' --eager-reference '" + kData +
                            "nsys/graph_serve_graph_only_h200.iterations.jsonl'");
  EXPECT_EQ(log.exit_code, 2);
  EXPECT_NE(log.err.find("--eager-reference takes the kind 'trace'"), std::string::npos) << log.err;
  testing::CliResult no_trace = testing::RunSightline(
      "analyze '" + kData +
      "nsys/graph_serve_graph_only_h200.iterations.jsonl' --eager-reference '" + kEagerOnly + "'");
  EXPECT_EQ(no_trace.exit_code, 2);
  EXPECT_NE(no_trace.err.find("--eager-reference needs a trace"), std::string::npos)
      << no_trace.err;
}

// The node export as if profiling had started after the capture (no capture points) and stopped
// before the eager steps (no eager run): the eager-only run of the program, recorded separately,
// gives each replayed kernel its range path (`analyze --eager-reference`,
// PathSource::kReference). The truth is the original export's capture points: every kernel,
// found there by its start and correlation id, was captured in `capture_bsB > P`, and takes P
// from the reference.
TEST(GraphServe, AnEagerReferenceGivesReplaysWithoutCapturePointsTheirCaptureRanges) {
  StatusOr<Trace> node = ImportTrace(kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  StatusOr<Trace> bare = ImportTrace(kNoCapture);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  auto eager = std::make_shared<Trace>();
  {
    StatusOr<Trace> e = ImportTrace(kEagerOnly);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    *eager = std::move(*e);
  }
  // The truth: (start, correlation) -> (bucket, path below capture_bsB).
  const GraphKernelPaths truth = ComputeGraphKernelPaths(*node);
  const std::regex capture(R"(capture_bs(\d+) > (.*))");
  std::map<std::pair<TimeNs, int64_t>, std::pair<int, std::string>> truth_of;
  for (size_t i = 0; i < node->kernels.size(); ++i) {
    if (truth.source.empty() || truth.source[i] != PathSource::kCapture) continue;
    std::smatch m;
    const std::string& path = truth.paths[truth.path[i]];
    ASSERT_TRUE(std::regex_match(path, m, capture)) << path;
    truth_of[{node->kernels.start_ns[i], node->kernels.correlation[i]}] = {std::stoi(m[1]), m[2]};
  }
  ASSERT_EQ(truth_of.size(), 40u * 279);

  RunInputs inputs;
  inputs.eager_reference = eager;
  inputs.eager_reference_path = kEagerOnly;
  const auto context = testing::Ctx(*bare, {}, inputs);
  const GraphKernelPaths& p = context->graphs().GraphPaths();
  EXPECT_EQ(p.alignment.kernels_matched, 0);  // the trace holds no eager run
  EXPECT_EQ(p.reference_alignment.replays, 40);
  EXPECT_EQ(p.reference_alignment.replays_matched, 40);
  EXPECT_EQ(p.reference_alignment.kernels, 40 * 279);
  EXPECT_EQ(p.reference_alignment.kernels_matched, 40 * 279);
  // Per bucket and path: kernels, and replays (launching calls) holding them.
  std::map<std::pair<int, std::string>, int64_t> kernels;
  std::map<std::pair<int, std::string>, std::set<int32_t>> replays;
  int64_t agree = 0;
  for (size_t i = 0; i < bare->kernels.size(); ++i) {
    ASSERT_EQ(p.source[i], PathSource::kReference) << i;
    auto t = truth_of.find({bare->kernels.start_ns[i], bare->kernels.correlation[i]});
    ASSERT_NE(t, truth_of.end()) << i;
    const std::string& path = p.paths[p.path[i]];
    agree += path == t->second.second;
    kernels[{t->second.first, path}] += 1;
    replays[{t->second.first, path}].insert(bare->kernels.launch_call[i]);
  }
  EXPECT_EQ(agree, 40 * 279);  // every kernel in the range it was captured in
  const std::map<std::string, int> per_part = {
      {"embed", 2}, {"attention", 18}, {"mlp", 15}, {"head", 13}};
  EXPECT_EQ(kernels.size(), 4u * 18);
  for (const auto& [key, n] : kernels) {
    const int replays_of_bucket = kReplays.at(key.first);
    EXPECT_EQ(static_cast<int>(replays.at(key).size()), replays_of_bucket) << key.second;
    const std::string part = key.second.substr(key.second.rfind(' ') + 1);
    EXPECT_EQ(n, int64_t{per_part.at(part)} * replays_of_bucket) << key.first << " " << key.second;
  }

  // The section's rows: per path, the kernels per replay of every bucket, 40 replays; the eager
  // columns are the reference's 8 eager steps.
  const CudaGraphsResult g = ComputeCudaGraphs(*bare, p, eager.get());
  EXPECT_EQ(g.by_reference, 40 * 279);
  EXPECT_EQ(g.in_ranges, g.graph_kernels);
  EXPECT_EQ(g.reference_unmatched, 0);
  ASSERT_EQ(g.rows.size(), 18u);
  for (const CaptureRangeRow& row : g.rows) {
    EXPECT_TRUE(row.reference) << row.path;
    const std::string part = row.path.substr(row.path.rfind(' ') + 1);
    EXPECT_EQ(row.nodes, per_part.at(part)) << row.path;
    EXPECT_DOUBLE_EQ(row.replays, 40.0) << row.path;
    EXPECT_EQ(row.eager_instances, 8) << row.path;
    EXPECT_DOUBLE_EQ(row.eager_kernels_per_instance, static_cast<double>(row.nodes)) << row.path;
  }
  // The NVTX projection counts them in the reference's ranges, apart from the trace's own.
  const NvtxProjectionResult np = testing::ValueOrDie(ComputeNvtxProjection(*context, {}));
  EXPECT_EQ(np.kernels_by_reference, 40 * 279);
  EXPECT_EQ(np.graph_kernels_unattributed(), 0);
  int64_t attention = 0;
  for (const NvtxRangeGroup& group : np.groups) {
    if (group.from_reference && group.reference_name == "attention") {
      EXPECT_EQ(group.depth, 1);
      EXPECT_EQ(group.count, 0);
      attention += group.work.kernel_count;
    }
  }
  EXPECT_EQ(attention, 40 * 8 * 18);

  testing::CliResult r =
      testing::RunSightline("analyze '" + kNoCapture + "' --eager-reference '" + kEagerOnly + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("11160 (100.0%) by alignment with the eager reference"), std::string::npos);
  // Without the reference nothing places them; an unreadable reference is a usage error.
  testing::CliResult plain = testing::RunSightline("analyze '" + kNoCapture + "'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("No graph kernel has a capture point or an eager counterpart"),
            std::string::npos);
  testing::CliResult missing =
      testing::RunSightline("analyze '" + kNoCapture + "' --eager-reference '" + kData +
                            "nsys/no_such_reference.sqlite'");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

// With capture points in the trace, the reference changes nothing: every kernel keeps its capture.
TEST(GraphServe, CapturePointsWinOverTheEagerReference) {
  StatusOr<Trace> node = ImportTrace(kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  auto eager = std::make_shared<Trace>();
  {
    StatusOr<Trace> e = ImportTrace(kEagerOnly);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    *eager = std::move(*e);
  }
  RunInputs inputs;
  inputs.eager_reference = eager;
  const auto context = testing::Ctx(*node, {}, inputs);
  const GraphKernelPaths& p = context->graphs().GraphPaths();
  EXPECT_TRUE(p.reference_alignment.counterpart.empty());
  int64_t captured = 0;
  for (PathSource s : p.source) captured += s == PathSource::kCapture;
  EXPECT_EQ(captured, 40 * 279);
  const CudaGraphsResult g = ComputeCudaGraphs(*node, p, eager.get());
  EXPECT_EQ(g.with_capture, 40 * 279);
  EXPECT_EQ(g.by_reference, 0);
}

}  // namespace
}  // namespace sightline
