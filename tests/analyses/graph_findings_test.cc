// The findings that know CUDA graphs (issue 29): graph_launch_gaps, graph_variants, graph_padding,
// and launch_bound staying quiet for work already replayed from graphs; on synthetic traces whose
// answers follow from their layout, and on the shipped graph samples.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "analyses/findings/findings.h"
#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"
#include "importers/importer.h"
#include "importers/iteration_log/iteration_log.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/";

const Finding* Find(const std::vector<Finding>& v, std::string_view id) {
  for (const Finding& f : v) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

const Value* Evidence(const Finding& f, std::string_view key) {
  for (const Fact& e : f.evidence) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

int64_t IntEvidence(const Finding& f, std::string_view key) {
  const Value* v = Evidence(f, key);
  if (v == nullptr || !std::holds_alternative<int64_t>(*v)) {
    ADD_FAILURE() << "no integer evidence " << key;
    return -1;
  }
  return std::get<int64_t>(*v);
}

std::vector<Finding> Findings(const Trace& t, RunInputs inputs = {}) {
  return testing::ValueOrDie(ComputeFindings(*Ctx(t, {}, std::move(inputs))));
}

// One replay: a cudaGraphLaunch at `launch` and `n` back-to-back 2 us kernels from `gpu`.
void Replay(TraceFixture& f, const std::string& kernel, TimeNs launch, TimeNs gpu, int n,
            int64_t correlation) {
  f.Api("cudaGraphLaunch", launch, launch + 500, ApiKind::kRuntime, {}, correlation);
  for (int i = 0; i < n; ++i) {
    f.Kernel(kernel, gpu + i * 2'000, gpu + (i + 1) * 2'000, {}, correlation);
  }
}

// Six steps of 200 us, each replaying three piecewise graphs (a, b, c: 10 kernels of 2 us each).
// Between a and b the host runs "prepare" (15 us) before launching b; after c it synchronizes, then
// "sample" with a blocking copy, and launches the next step's a at its start + 1 us. GPU idle per
// step: 17 + 17 us between the pieces, 106 us between steps; of it before the next launch: 15,
// 15 and 104 us.
Trace PiecewiseGraphLoop() {
  TraceFixture f;
  f.Device(0);
  int64_t corr = 100;
  for (int step = 0; step < 6; ++step) {
    const TimeNs s = step * 200'000;
    f.Range(fmt::format("step_{}", step), s, s + 200'000);
    Replay(f, "a_kernel", s + 1'000, s + 3'000, 10, corr++);
    f.Range("prepare", s + 23'000, s + 38'000);
    Replay(f, "b_kernel", s + 38'000, s + 40'000, 10, corr++);
    Replay(f, "c_kernel", s + 75'000, s + 77'000, 10, corr++);
    f.Api("cudaStreamSynchronize", s + 76'000, s + 97'500);
    f.Range("sample", s + 98'000, s + 190'000);
    f.Api("cudaMemcpy", s + 120'000, s + 130'000);
  }
  return f.Build();
}

TEST(GraphFindings, GapsBetweenReplaysAreTheHostsAndLaunchBoundKeepsQuiet) {
  const Trace t = PiecewiseGraphLoop();
  const std::vector<Finding> found = Findings(t);
  // The steps' kernels all come from graphs: "capture it in a CUDA graph" does not apply, though
  // each step has 30 short kernels and GPU idle between them.
  EXPECT_EQ(Find(found, "launch_bound"), nullptr);
  const Finding* f = Find(found, "graph_launch_gaps");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(IntEvidence(*f, "replays"), 18);
  EXPECT_EQ(IntEvidence(*f, "late_launches"), 17);
  EXPECT_EQ(IntEvidence(*f, "idle_between_replays_ns"), 6 * (17'000 + 17'000) + 5 * 106'000);
  EXPECT_EQ(IntEvidence(*f, "idle_before_launch_ns"), 6 * (15'000 + 15'000) + 5 * 104'000);
  EXPECT_EQ(f->estimated_savings_ns, 6 * (15'000 + 15'000) + 5 * 104'000);
  EXPECT_EQ(IntEvidence(*f, "median_gap_ns"), 15'000);
  EXPECT_EQ(IntEvidence(*f, "variants"), 3);
  // The host work in the gaps: the ranges and calls by time inside them, not the steps.
  const Value* ranges = Evidence(*f, "host_ranges");
  ASSERT_NE(ranges, nullptr);
  const std::string r = std::get<std::string>(*ranges);
  EXPECT_EQ(r.find("sample x5"), 0u) << r;  // the last step's sample follows no replay
  EXPECT_NE(r.find("prepare x6"), std::string::npos) << r;
  EXPECT_EQ(r.find("step_"), std::string::npos) << r;
  const std::string calls = std::get<std::string>(*Evidence(*f, "host_calls"));
  EXPECT_NE(calls.find("cudaMemcpy x5"), std::string::npos) << calls;
  EXPECT_NE(f->recommendation.find("blocks in the gaps"), std::string::npos);
  EXPECT_EQ(f->spans.size(), 17u);
}

// Each next launch is issued while the previous replay still runs: the GPU's gaps are not the
// host's; nothing to find.
TEST(GraphFindings, LaunchesAheadOfTheGpuAreNoFinding) {
  TraceFixture f;
  f.Device(0);
  int64_t corr = 100;
  for (int step = 0; step < 8; ++step) {  // launched every 10 us, each replay 20 us + 10 idle
    Replay(f, "a_kernel", step * 10'000, step * 30'000 + 5'000, 10, corr++);
  }
  const Trace t = f.Build();
  EXPECT_EQ(Find(Findings(t), "graph_launch_gaps"), nullptr);
}

// Four graphs (batch sizes 1, 2, 4, 8): three replayed often, one once; five captures in the
// trace, the fifth making a graph never replayed. Capture points tie each replayed graph to its
// capture (nsys node tracing), so the unpaid captures are the one replayed once and the fifth.
TEST(GraphFindings, ManyGraphVariantsWithTheirCaptureCost) {
  TraceFixture f;
  f.Device(0);
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int v = 0; v < 5; ++v) {
    const TimeNs s = v * 10'000;
    f.Api("cudaStreamBeginCapture", s, s + 100);
    f.Api("cudaLaunchKernel", s + 200, s + 300);  // captured
    f.Api("cudaStreamEndCapture", s + 1'000, s + 1'100);
    f.Api("cudaGraphInstantiateWithFlags", s + 2'000, s + 4'000);
  }
  int64_t corr = 500;
  TimeNs t = 100'000;
  std::vector<std::pair<int, int>> plan = {{0, 6}, {1, 5}, {2, 4}, {3, 1}};  // (graph, replays)
  for (const auto& [v, n] : plan) {
    for (int i = 0; i < n; ++i) {
      Replay(f, fmt::format("gemm_bs{}", sizes[v]), t, t + 1'000, 3, corr++);
      t += 20'000;
    }
  }
  Trace trace = f.Build();
  KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const std::string name(trace.str(k.name[i]));
    int v = 0;
    while (name != fmt::format("gemm_bs{}", sizes[v])) ++v;
    k.graph_node[i] = 1'000 + static_cast<int64_t>(i);
    k.capture_node[i] = 10 * (v + 1);
    k.capture_ns[i] = v * 10'000 + 250;  // inside capture v
    k.capture_pid[i] = 100;
    k.capture_tid[i] = 100;
  }
  const GraphReplays gr = ComputeGraphReplays(trace, GraphKernelRows(trace));
  ASSERT_EQ(gr.variants.size(), 4u);
  ASSERT_EQ(gr.captures.size(), 5u);
  EXPECT_EQ(gr.captures[4].variant, -1);
  EXPECT_EQ(gr.captures[0].host_ns(), 1'100 + 2'000);
  const std::vector<Finding> found = Findings(trace);
  const Finding* g = Find(found, "graph_variants");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(IntEvidence(*g, "graphs"), 4);
  EXPECT_EQ(IntEvidence(*g, "replays"), 16);
  EXPECT_EQ(IntEvidence(*g, "rare_graphs"), 1);
  EXPECT_EQ(IntEvidence(*g, "captures"), 5);
  EXPECT_EQ(IntEvidence(*g, "capture_host_ns"), 5 * 3'100);
  EXPECT_EQ(IntEvidence(*g, "captured_not_replayed"), 1);
  EXPECT_EQ(g->estimated_savings_ns, 2 * 3'100);
  EXPECT_EQ(g->severity, Severity::kMedium);
  EXPECT_EQ(g->where.find("graph 1 (3 kernels): 6 replays"), 0u) << g->where;

  // Two graphs: no finding.
  TraceFixture few;
  few.Device(0);
  for (int i = 0; i < 6; ++i) Replay(few, i % 2 ? "x" : "y", i * 20'000, i * 20'000 + 1'000, 3, i);
  EXPECT_EQ(Find(Findings(few.Build()), "graph_variants"), nullptr);
}

// Decode steps replaying graphs for batch 8 or 16 (told apart by their kernels) and an iteration
// log with the real batch per step (generation requests): steps running 5 to 8 sequences replay
// the 8-graph, 9 to 16 the 16-graph.
struct PaddedLoop {
  Trace trace;
  std::shared_ptr<IterationLog> log;
};

PaddedLoop Padded(bool log_graph_batch) {
  const int real[] = {5, 6, 8, 7, 5, 9, 12, 16, 10, 9};
  TraceFixture f;
  f.Device(0);
  auto log = std::make_shared<IterationLog>();
  for (int step = 0; step < 10; ++step) {
    const TimeNs s = step * 100'000;
    const int bucket = real[step] <= 8 ? 8 : 16;
    f.Range(fmt::format("decode_step_{}", step), s, s + 90'000);
    Replay(f, fmt::format("gemm_bs{}", bucket), s + 1'000, s + 2'000, 4, 700 + step);
    IterationLogEntry& e = log->entries.emplace_back();
    e.line = step + 1;
    e.iteration = step;
    e.fields[static_cast<int>(IterationLogField::kContextRequests)] = 0;
    e.fields[static_cast<int>(IterationLogField::kGenerationRequests)] = real[step];
    if (log_graph_batch) e.user.push_back({"graph_batch_size", int64_t{bucket}});
  }
  return {f.Build(), log};
}

TEST(GraphFindings, PaddingFromTheLoggedGraphBatch) {
  PaddedLoop p = Padded(/*log_graph_batch=*/true);
  RunInputs inputs;
  inputs.iteration_log = p.log;
  const std::vector<Finding> found = Findings(p.trace, inputs);
  const Finding* f = Find(found, "graph_padding");
  ASSERT_NE(f, nullptr);
  // Slots: 5 steps of 8 and 5 of 16 = 120; padding: (3+2+0+1+3) + (7+4+0+6+7) = 33.
  EXPECT_EQ(IntEvidence(*f, "iterations"), 10);
  EXPECT_EQ(IntEvidence(*f, "padded_iterations"), 8);
  EXPECT_DOUBLE_EQ(std::get<double>(*Evidence(*f, "padded_slots_pct")), 100.0 * 33 / 120);
  // Each replay: 4 kernels x 2 us; at most its padded share of it.
  const double upper = 8'000.0 * (3.0 / 8 + 2.0 / 8 + 1.0 / 8 + 3.0 / 8) +
                       8'000.0 * (7.0 / 16 + 4.0 / 16 + 6.0 / 16 + 7.0 / 16);
  EXPECT_EQ(f->estimated_savings_ns, static_cast<int64_t>(upper));
  EXPECT_EQ(std::get<std::string>(*Evidence(*f, "replayed_batch_source")),
            "the log's graph batch size");
  EXPECT_EQ(f->title.find(", at least"), std::string::npos);
}

TEST(GraphFindings, PaddingWithoutTheGraphBatchIsALowerBound) {
  PaddedLoop p = Padded(/*log_graph_batch=*/false);
  RunInputs inputs;
  inputs.iteration_log = p.log;
  const std::vector<Finding> found = Findings(p.trace, inputs);
  const Finding* f = Find(found, "graph_padding");
  ASSERT_NE(f, nullptr);
  // The 8-graph ran up to 8 and the 16-graph up to 16: the same answer, as a lower bound.
  EXPECT_DOUBLE_EQ(std::get<double>(*Evidence(*f, "padded_slots_pct")), 100.0 * 33 / 120);
  EXPECT_NE(f->title.find(", at least"), std::string::npos);
  // Without a log, or with prefill in every step, there is nothing to compare.
  EXPECT_EQ(Find(Findings(p.trace), "graph_padding"), nullptr);
  for (IterationLogEntry& e : p.log->entries) {
    e.fields[static_cast<int>(IterationLogField::kContextRequests)] = 1;
  }
  EXPECT_EQ(Find(Findings(p.trace, inputs), "graph_padding"), nullptr);
}

// The shipped samples: the H100 graph-decode export replays one graph (12 times) and its eager
// steps are launch-bound, which the finding says as "take the graph path", not "use graphs"; the
// decode loop in graph-trace mode replays one whole graph 20 times, launched ~7 us after each
// replay ends (1.3% of a 519 us replay): neither a gaps nor a variants finding.
TEST(GraphFindings, ShippedSamples) {
  StatusOr<Trace> node = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const std::vector<Finding> a = Findings(*node);
  EXPECT_EQ(Find(a, "graph_variants"), nullptr);
  const Finding* lb = Find(a, "launch_bound");
  ASSERT_NE(lb, nullptr);
  EXPECT_NE(lb->recommendation.find("already replays CUDA graphs"), std::string::npos);
  StatusOr<Trace> loop = ImportTrace(kData + "nsys/decode_loop_graph_trace_h100.sqlite");
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  auto ctx = Ctx(*loop);
  const GraphReplays& gr = ctx->graphs().Replays();
  EXPECT_EQ(gr.replays.size(), 20u);
  EXPECT_EQ(gr.variants.size(), 1u);
  StatusOr<std::vector<Finding>> b = ComputeFindings(*ctx);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Find(*b, "graph_launch_gaps"), nullptr);
  EXPECT_EQ(Find(*b, "graph_variants"), nullptr);
}

}  // namespace
}  // namespace sightline
