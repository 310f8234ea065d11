// The cuda_graphs section's choice of eager runs by batch size for graphs traced as a whole, from
// the iteration log joined to the trace (analyses/cuda_graphs/graph_step_batches.h): the log's
// lines become the steps' batch sizes, lines that state none are counted and shown, and the
// section says per graph which eager runs its estimate used (docs/analyses/cuda_graphs.md, "Eager
// runs of the graph's batch size").
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/cuda_graphs/graph_step_batches.h"
#include "analyses/iteration_log/iteration_log_batch.h"
#include "analyses/iteration_log/iteration_log_join.h"
#include "importers/iteration_log/iteration_log.h"
#include "model/trace_builder.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

// A serving loop of two buckets: step_0, step_1 replay the graph captured in capture_bs1 (graph
// 1), step_2, step_3 the one captured in capture_bs4 (graph 2); step_4 and step_5 run the step
// eagerly at batch 1 (kernels of 10 and 20 ns) and at batch 4 (40 and 80 ns).
Trace Serving() {
  TraceFixture f;
  f.Device(0);
  testing::AddTwoBucketServingLoop(f, /*first_eager_step=*/4, /*eager_start=*/14'000);
  NoteWholeGraphRuns(f.builder().diagnostics(), 4);  // as an importer does
  return f.Build();
}

// One log line of the trace's process (pid 100) with `rest` appended inside the object.
std::string Line(int iteration, const std::string& rest) {
  return "{\"schema_version\":1,\"iteration\":" + std::to_string(iteration) +
         ",\"pid\":100,\"context_requests\":0" + rest + "}\n";
}

// The serving loop's log as graph_serve.py writes it: graph steps with their real batch and the
// bucket replayed, eager steps with the batch they ran and no graph_batch_size.
const std::string kLog = Line(0, ",\"generation_requests\":1,\"user\":{\"graph_batch_size\":1}") +
                         Line(1, ",\"generation_requests\":1,\"user\":{\"graph_batch_size\":1}") +
                         Line(2, ",\"generation_requests\":3,\"user\":{\"graph_batch_size\":4}") +
                         Line(3, ",\"generation_requests\":4,\"user\":{\"graph_batch_size\":4}") +
                         Line(4, ",\"generation_requests\":1") +
                         Line(5, ",\"generation_requests\":4");

RunInputs WithLog(const std::string& text) {
  StatusOr<IterationLog> log = ParseIterationLog(text, "log.jsonl");
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  RunInputs inputs;
  if (log.ok()) inputs.iteration_log = std::make_shared<IterationLog>(std::move(*log));
  return inputs;
}

const Section& CudaGraphs(const Report& report) {
  for (const Section& s : report.sections) {
    if (s.key == "cuda_graphs") return s;
  }
  ADD_FAILURE() << "no cuda_graphs section";
  static const Section kNone;
  return kNone;
}

const Table* FindTable(const Section& s, const std::string& key) {
  for (const Table& t : s.tables) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

const Value* FindFact(const Section& s, const std::string& key) {
  for (const Fact& f : s.facts) {
    if (f.key == key) return &f.value;
  }
  return nullptr;
}

std::string Notes(const Section& s) {
  std::string out;
  for (const std::string& n : s.notes) out += n + "\n";
  for (const Table& t : s.tables) out += t.note + "\n";
  return out;
}

// A row of the whole_graphs table as {column key: value}.
struct GraphRow {
  const Table* table;
  size_t row;
  const Value& operator[](const std::string& key) const {
    for (size_t c = 0; c < table->columns.size(); ++c) {
      if (table->columns[c].key == key) return table->rows[row][c];
    }
    ADD_FAILURE() << "no column " << key;
    static const Value kNone;
    return kNone;
  }
};

// The run's log is joined to a trace once, by the first that asks (here the whole-graph batches),
// and every later reader (the iterations section, the floor, graph_padding) gets that join.
TEST(CudaGraphsBatch, TheLogIsJoinedOncePerTrace) {
  const Trace trace = Serving();
  const auto context = Ctx(trace, {}, WithLog(kLog));
  EXPECT_EQ(context->results().Find<IterationLogJoin>(), nullptr);
  ASSERT_TRUE(GraphStepBatchesFromLog(*context).has_value());
  const IterationLogJoin* join = context->results().Find<IterationLogJoin>();
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->rows.size(), 6u);
  EXPECT_EQ(IterationLogJoinOf(*context), join);
  EXPECT_EQ(IterationLogJoinOf(*Ctx(trace)), nullptr);  // a run without a log joins none
}

TEST(CudaGraphsBatch, TheLogGivesEachGraphTheEagerRunsOfItsBatch) {
  const Trace trace = Serving();
  const auto context = Ctx(trace, {}, WithLog(kLog));
  const std::optional<GraphStepBatches> sb = GraphStepBatchesFromLog(*context);
  ASSERT_TRUE(sb.has_value());
  EXPECT_EQ(sb->join, "iteration counter");
  EXPECT_EQ(sb->steps, 6);
  EXPECT_EQ(sb->with_batch, 6);
  EXPECT_EQ(sb->with_graph, 4);
  EXPECT_EQ(sb->without_batch + sb->garbage + sb->with_context, 0);

  Report report;
  ASSERT_TRUE(RunCudaGraphsSection(*context, 0, report).ok());
  const Section& s = CudaGraphs(report);
  const Value* own = FindFact(s, "graphs_of_own_batch");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(std::get<int64_t>(*own), 2);
  EXPECT_EQ(FindFact(s, "steps_without_batch"), nullptr);  // shown only when some line has none
  const Table* t = FindTable(s, "whole_graphs");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 2u);
  const GraphRow one{t, 0}, four{t, 1};
  EXPECT_EQ(std::get<int64_t>(one["batch"]), 1);
  EXPECT_EQ(std::get<int64_t>(four["batch"]), 4);
  EXPECT_EQ(std::get<std::string>(one["eager_selection"]), "eager runs of batch 1 (iteration log)");
  EXPECT_EQ(std::get<std::string>(four["eager_selection"]),
            "eager runs of batch 4 (iteration log)");
  EXPECT_EQ(std::get<std::string>(four["selection"]), "of_batch");
  EXPECT_EQ(std::get<int64_t>(one["est_gpu_ns"]), 30);    // 10 + 20: batch 1's kernels
  EXPECT_EQ(std::get<int64_t>(four["est_gpu_ns"]), 120);  // 40 + 80: batch 4's
  EXPECT_EQ(std::get<int64_t>(four["eager_runs"]), 1);
  EXPECT_EQ(std::get<int64_t>(four["eager_candidates"]), 2);
  EXPECT_NE(Notes(s).find("2 of 2 estimated graphs use only the eager runs of their own batch"),
            std::string::npos)
      << Notes(s);

  // Without a log: both graphs average both eager runs, and the table says so.
  const auto plain = Ctx(trace);
  EXPECT_FALSE(GraphStepBatchesFromLog(*plain).has_value());
  Report without;
  ASSERT_TRUE(RunCudaGraphsSection(*plain, 0, without).ok());
  const Section& w = CudaGraphs(without);
  EXPECT_EQ(FindFact(w, "graphs_of_own_batch"), nullptr);
  const Table* wt = FindTable(w, "whole_graphs");
  ASSERT_NE(wt, nullptr);
  for (size_t r = 0; r < wt->rows.size(); ++r) {
    const GraphRow g{wt, r};
    EXPECT_EQ(std::get<std::string>(g["eager_selection"]), "all eager runs");
    EXPECT_EQ(std::get<std::string>(g["selection"]), "all");
    EXPECT_TRUE(std::holds_alternative<std::monostate>(g["batch"]));
    EXPECT_EQ(std::get<int64_t>(g["est_gpu_ns"]), 75);  // (30 + 120) / 2
  }
}

// A log whose batch sizes are absent or garbage neither crashes nor chooses silently: the lines
// that give no batch are counted by kind and shown, and the graphs they leave without a batch
// take all the eager runs, saying why.
TEST(CudaGraphsBatch, LinesWithoutAUsableBatchAreCountedAndShown) {
  const Trace trace = Serving();
  const std::string log =
      Line(0, ",\"user\":{\"graph_batch_size\":\"one\"}") +  // a string, no batch
      Line(1, ",\"generation_requests\":-1,\"user\":{\"graph_batch_size\":0}") +   // negative, 0
      Line(2, ",\"generation_requests\":3,\"user\":{\"graph_batch_size\":2.5}") +  // fractional
      Line(3, ",\"active_requests\":4,\"user\":{\"padded_batch_size\":4.0}") +  // integral double
      "{\"schema_version\":1,\"iteration\":4,\"pid\":100}\n" +                  // nothing stated
      "{\"schema_version\":1,\"iteration\":5,\"pid\":100,\"context_requests\":2,"
      "\"generation_requests\":4}\n";  // prefill
  const auto context = Ctx(trace, {}, WithLog(log));
  const std::optional<GraphStepBatches> sb = GraphStepBatchesFromLog(*context);
  ASSERT_TRUE(sb.has_value());
  EXPECT_EQ(sb->steps, 6);
  EXPECT_EQ(sb->with_batch, 2);      // lines 2 (3) and 3 (4, from active_requests)
  EXPECT_EQ(sb->with_graph, 1);      // line 3's 4.0
  EXPECT_EQ(sb->without_batch, 4);   // lines 0, 1, 4, 5
  EXPECT_EQ(sb->bad_graph, 3);       // "one", 0, 2.5
  EXPECT_EQ(sb->bad_batch, 1);       // -1
  EXPECT_EQ(sb->garbage, 3);         // lines 0, 1, 2
  EXPECT_EQ(sb->nothing_stated, 1);  // line 4
  EXPECT_EQ(sb->with_context, 1);

  Report report;
  ASSERT_TRUE(RunCudaGraphsSection(*context, 0, report).ok());
  const Section& s = CudaGraphs(report);
  const Value* without = FindFact(s, "steps_without_batch");
  ASSERT_NE(without, nullptr);
  EXPECT_EQ(std::get<int64_t>(*without), 4);
  const Value* bad = FindFact(s, "steps_bad_batch");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(std::get<int64_t>(*bad), 3);
  const Value* runs = FindFact(s, "whole_runs_without_batch");
  ASSERT_NE(runs, nullptr);
  EXPECT_EQ(std::get<int64_t>(*runs), 2);  // graph 1's runs (steps 0 and 1)
  const std::string notes = Notes(s);
  for (const char* want :
       {"4 of the 6 joined lines give no batch",
        "1 state no generation_requests or active_requests", "1 a negative request count",
        "3 a graph_batch_size", "1 context (prefill) work",
        "2 of the 4 whole-graph runs lie in no step that states a batch",
        "2 graphs took all the eager runs instead of those of their own"}) {
    EXPECT_NE(notes.find(want), std::string::npos) << want << "\n" << notes;
  }
  const Table* t = FindTable(s, "whole_graphs");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 2u);
  // Graph 1: its steps state nothing usable. Graph 2: batch 4 (line 3's padded_batch_size), but
  // the eager runs' steps (4: nothing, 5: prefill) state no batch: all of them, and why.
  EXPECT_EQ(std::get<std::string>(GraphRow{t, 0}["selection"]), "all_graph_batch_unknown");
  EXPECT_EQ(std::get<std::string>(GraphRow{t, 1}["selection"]), "all_none_of_batch");
  EXPECT_EQ(std::get<int64_t>(GraphRow{t, 1}["batch"]), 4);
  EXPECT_EQ(std::get<std::string>(GraphRow{t, 1}["eager_selection"]),
            "all eager runs (none of batch 4)");
  EXPECT_EQ(std::get<int64_t>(GraphRow{t, 1}["est_gpu_ns"]), 75);
  EXPECT_NE(notes.find("none is of that batch (theirs: none stated)"), std::string::npos) << notes;
}

// A log that joins no step of the trace (another process's lines among several) says so.
TEST(CudaGraphsBatch, ALogThatJoinsNothingSaysSo) {
  const Trace trace = Serving();
  const std::string log =
      "{\"schema_version\":1,\"iteration\":0,\"pid\":7}\n"
      "{\"schema_version\":1,\"iteration\":0,\"pid\":8}\n";
  const auto context = Ctx(trace, {}, WithLog(log));
  Report report;
  ASSERT_TRUE(RunCudaGraphsSection(*context, 0, report).ok());
  const Section& s = CudaGraphs(report);
  const std::string notes = Notes(s);
  EXPECT_NE(notes.find("No line joined a step of the trace (the log holds 2 processes"),
            std::string::npos)
      << notes;
  const Table* t = FindTable(s, "whole_graphs");
  ASSERT_NE(t, nullptr);
  for (size_t r = 0; r < t->rows.size(); ++r) {
    EXPECT_EQ(std::get<std::string>(GraphRow{t, r}["selection"]), "all_graph_batch_unknown");
  }
}

TEST(IterationLogBatch, ReadsTheRealAndTheGraphBatch) {
  IterationLogEntry e;
  e.fields[static_cast<int>(IterationLogField::kActiveRequests)] = 6;
  EXPECT_EQ(LoggedBatchOf(e).decode, 6);  // active_requests when no generation_requests
  e.fields[static_cast<int>(IterationLogField::kGenerationRequests)] = 5;
  EXPECT_EQ(LoggedBatchOf(e).decode, 5);
  EXPECT_FALSE(LoggedBatchOf(e).graph.has_value());
  // The first graph batch key with a positive integer; garbage before it is forgiven.
  e.user = {{"graph_batch_size", std::string("x")}, {"cuda_graph_batch_size", int64_t{8}}};
  EXPECT_EQ(LoggedBatchOf(e).graph, 8);
  EXPECT_FALSE(LoggedBatchOf(e).bad_graph);
  e.user = {{"graph_batch_size", 1e300}};
  EXPECT_FALSE(LoggedBatchOf(e).graph.has_value());
  EXPECT_TRUE(LoggedBatchOf(e).bad_graph);
  e.user = {{"batch", int64_t{8}}};  // not a graph batch key
  EXPECT_FALSE(LoggedBatchOf(e).graph.has_value());
  EXPECT_FALSE(LoggedBatchOf(e).bad_graph);
  e.fields[static_cast<int>(IterationLogField::kContextRequests)] = 1;
  EXPECT_TRUE(LoggedBatchOf(e).context);
  EXPECT_FALSE(LoggedBatchOf(e).decode.has_value());
}

}  // namespace
}  // namespace sightline
