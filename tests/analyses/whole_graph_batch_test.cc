// The whole-graph estimate's choice of eager runs by batch size
// (analyses/cuda_graphs/whole_graph_estimate.h, StepBatches; docs/analyses/cuda_graphs.md, "Eager
// runs of the graph's batch size"): a serving loop captures the same step once per batch size, so
// every eager run matches every capture by its ranges alone, and only the steps' batch sizes tell a
// graph which eager runs are its own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyses/cuda_graphs/whole_graph_estimate.h"
#include "model/trace_builder.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;

// Two captures of one step (ranges layer_0 > attention: one launch, layer_0 > mlp: one launch),
// the first inside capture_bs1 (graph 1), the second inside capture_bs4 (graph 2), paired in
// order; each graph runs twice (graph 1 at 10'000 and 11'000, graph 2 at 12'000 and 13'000), each
// run in its own step; then two eager steps with the same ranges, step 20 at batch 1 (kernels of
// 10 and 20 ns) and step 21 at batch 4 (40 and 80 ns): the larger batch runs longer.
struct Serving {
  TraceFixture f;
  Serving() {
    f.Device(0);
    testing::AddTwoBucketServingLoop(f, /*first_eager_step=*/20, /*eager_start=*/20'000);
  }
};

// What an iteration log says of those steps: graph steps 0, 1 replay graph 1 (batch 1), steps
// 2, 3 graph 2 (real batches 3 and 4, graph batch 4); eager steps 20 and 21 at batch 1 and 4.
StepBatches Logged() {
  StepBatches b;
  b.steps = {{-1, 10'000, 10'500, 1, 1}, {-1, 11'000, 11'500, 1, 1},  {-1, 12'000, 12'500, 3, 4},
             {-1, 13'000, 13'500, 4, 4}, {-1, 20'000, 20'500, 1, -1}, {-1, 21'000, 21'500, 4, -1}};
  return b;
}

DurationNs RangeNs(const WholeGraphEstimate::Graph& g, const std::string& path) {
  for (const WholeGraphEstimate::Range& r : g.ranges) {
    if (r.path == path) return r.eager_ns;
  }
  ADD_FAILURE() << "no range " << path;
  return -1;
}

TEST(WholeGraphBatch, EachGraphIsEstimatedFromTheEagerRunsOfItsOwnBatch) {
  const Trace trace = Serving().f.Build();
  // Without the steps' batches both graphs average both eager runs: one estimate for both.
  const WholeGraphEstimate all = EstimateWholeGraphs(trace);
  ASSERT_EQ(all.graphs.size(), 2u);
  for (const WholeGraphEstimate::Graph& g : all.graphs) {
    EXPECT_EQ(g.selection, EagerSelection::kAll);
    EXPECT_EQ(g.eager_runs, 2);
    EXPECT_EQ(g.batch, -1);
    EXPECT_EQ(RangeNs(g, "layer_0 > attention"), 25);  // (10 + 40) / 2
    EXPECT_EQ(RangeNs(g, "layer_0 > mlp"), 50);        // (20 + 80) / 2
  }
  EXPECT_FALSE(all.step_batches);

  const StepBatches batches = Logged();
  const WholeGraphEstimate e = EstimateWholeGraphs(trace, nullptr, &batches);
  EXPECT_TRUE(e.step_batches);
  EXPECT_EQ(e.runs_without_batch, 0);
  ASSERT_EQ(e.graphs.size(), 2u);
  const WholeGraphEstimate::Graph& one = e.graphs[0];
  const WholeGraphEstimate::Graph& four = e.graphs[1];
  EXPECT_EQ(one.capture_range, "capture_bs1");
  EXPECT_EQ(four.capture_range, "capture_bs4");
  EXPECT_EQ(one.batch, 1);
  EXPECT_EQ(four.batch, 4);
  for (const WholeGraphEstimate::Graph* g : {&one, &four}) {
    EXPECT_EQ(g->batch_source, GraphBatchSource::kGraphBatch);
    EXPECT_EQ(g->selection, EagerSelection::kOfBatch);
    EXPECT_EQ(g->runs_in_steps, 2);
    EXPECT_EQ(g->runs_other_batch, 0);
    EXPECT_EQ(g->eager_candidates, 2);
    EXPECT_EQ(g->candidate_batches, (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(g->eager_runs, 1);
    EXPECT_EQ(g->matched, 2);
  }
  EXPECT_EQ(one.eager_range, "step_20");
  EXPECT_EQ(four.eager_range, "step_21");
  EXPECT_EQ(RangeNs(one, "layer_0 > attention"), 10);
  EXPECT_EQ(RangeNs(one, "layer_0 > mlp"), 20);
  EXPECT_EQ(one.eager_ns, 30);
  EXPECT_EQ(RangeNs(four, "layer_0 > attention"), 40);
  EXPECT_EQ(RangeNs(four, "layer_0 > mlp"), 80);
  EXPECT_EQ(four.eager_ns, 120);
}

// Without a graph batch size in the log, a graph's batch is the largest real batch of the steps
// holding its runs (its captured size is at least that): 4 for graph 2 (real batches 3 and 4).
TEST(WholeGraphBatch, WithoutAGraphBatchSizeTheLargestRealBatchOfItsRuns) {
  const Trace trace = Serving().f.Build();
  StepBatches batches = Logged();
  for (StepBatches::Step& s : batches.steps) s.graph_batch = -1;
  const WholeGraphEstimate e = EstimateWholeGraphs(trace, nullptr, &batches);
  ASSERT_EQ(e.graphs.size(), 2u);
  EXPECT_EQ(e.graphs[1].batch, 4);
  EXPECT_EQ(e.graphs[1].batch_source, GraphBatchSource::kLargestRealBatch);
  EXPECT_EQ(e.graphs[1].selection, EagerSelection::kOfBatch);
  EXPECT_EQ(e.graphs[1].eager_ns, 120);
  EXPECT_EQ(e.graphs[0].eager_ns, 30);
}

// When no eager run of a graph's batch matches, the graph takes all of them and says why; so it
// does when its runs lie in no step with a batch, or when the eager runs come from another trace.
TEST(WholeGraphBatch, FallsBackToAllEagerRunsAndSaysWhy) {
  const Trace trace = Serving().f.Build();
  // Graph 2 replayed a graph of batch 8 (so the log says): no eager run of batch 8.
  StepBatches batches = Logged();
  batches.steps[2].graph_batch = 8;
  batches.steps[3].graph_batch = 8;
  WholeGraphEstimate e = EstimateWholeGraphs(trace, nullptr, &batches);
  ASSERT_EQ(e.graphs.size(), 2u);
  EXPECT_EQ(e.graphs[0].selection, EagerSelection::kOfBatch);
  EXPECT_EQ(e.graphs[0].eager_ns, 30);
  EXPECT_EQ(e.graphs[1].batch, 8);
  EXPECT_EQ(e.graphs[1].selection, EagerSelection::kAllNoneOfBatch);
  EXPECT_EQ(e.graphs[1].candidate_batches, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(e.graphs[1].eager_runs, 2);
  EXPECT_EQ(e.graphs[1].eager_ns, 75);  // the mean of both runs, as without a log

  // The log's steps disagree on graph 2's batch: the most frequent wins, the other is counted.
  batches = Logged();
  batches.steps[3].graph_batch = 8;
  e = EstimateWholeGraphs(trace, nullptr, &batches);
  EXPECT_EQ(e.graphs[1].batch, 4);  // 4 (one run) against 8 (one run): the smaller on a tie
  EXPECT_EQ(e.graphs[1].runs_in_steps, 2);
  EXPECT_EQ(e.graphs[1].runs_other_batch, 1);
  EXPECT_EQ(e.graphs[1].eager_ns, 120);

  // Graph 2's runs lie in no step of the log, and the eager step 21 states no batch.
  batches = Logged();
  batches.steps.erase(batches.steps.begin() + 2, batches.steps.begin() + 4);
  batches.steps.back().batch = -1;
  e = EstimateWholeGraphs(trace, nullptr, &batches);
  EXPECT_EQ(e.runs_without_batch, 2);
  EXPECT_EQ(e.graphs[1].batch, -1);
  EXPECT_EQ(e.graphs[1].selection, EagerSelection::kAllGraphUnknown);
  EXPECT_EQ(e.graphs[1].eager_ns, 75);
  EXPECT_EQ(e.graphs[0].selection, EagerSelection::kOfBatch);  // step 20 still says batch 1
  EXPECT_EQ(e.graphs[0].candidate_batches, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(e.graphs[0].eager_ns, 30);

  // Eager runs from a second trace: the log is of the first one, so no eager run has a batch.
  const Trace reference = Serving().f.Build();
  batches = Logged();
  e = EstimateWholeGraphs(trace, &reference, &batches);
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    EXPECT_EQ(g.selection, EagerSelection::kAllNoEagerBatch);
    EXPECT_EQ(g.eager_ns, 75);
  }
  EXPECT_EQ(e.graphs[1].batch, 4);

  // An empty log (nothing joined): every graph's batch is unknown; nothing else changes.
  const StepBatches none;
  e = EstimateWholeGraphs(trace, nullptr, &none);
  EXPECT_EQ(e.runs_without_batch, 4);
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    EXPECT_EQ(g.selection, EagerSelection::kAllGraphUnknown);
    EXPECT_EQ(g.eager_ns, 75);
  }
}

// Steps of another process give nothing; overlapping (hostile) windows do not crash, and a step
// is found for an instant only when it holds it.
TEST(WholeGraphBatch, StepsOfAnotherProcessOrOverlappingStepsAreHandled) {
  const Trace trace = Serving().f.Build();
  StepBatches batches = Logged();
  for (StepBatches::Step& s : batches.steps) s.pid = 4242;  // the fixture's process is 100
  WholeGraphEstimate e = EstimateWholeGraphs(trace, nullptr, &batches);
  EXPECT_EQ(e.runs_without_batch, 4);
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    EXPECT_EQ(g.selection, EagerSelection::kAllGraphUnknown);
  }

  batches = Logged();
  for (int i = 0; i < 1'000; ++i) {
    batches.steps.push_back({-1, 0, 1'000'000, -1, -1});  // a window over everything, no batch
  }
  batches.steps.push_back({-1, 0, 1, 7, 7});  // ends before anything
  e = EstimateWholeGraphs(trace, nullptr, &batches);
  ASSERT_EQ(e.graphs.size(), 2u);
  EXPECT_EQ(e.graphs[0].batch, 1);
  EXPECT_EQ(e.graphs[1].batch, 4);
  EXPECT_EQ(e.graphs[0].eager_ns, 30);
  EXPECT_EQ(e.graphs[1].eager_ns, 120);
}

}  // namespace
}  // namespace sightline
