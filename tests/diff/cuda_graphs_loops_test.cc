// CUDA graphs in the program's loops (analyses/cuda_graphs/cuda_graphs.h): a capture again inside
// the loop is a finding, a recording's graph node records attribute replayed kernels as the export
// does, graph steps' parts are by the layer that captured, and both loops of the graph-decode case
// (graph replays, eager steps) are found. The case and the truth: cuda_graphs_cases.h.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/cuda_graphs/whole_graph_estimate.h"
#include "analyses/findings/findings.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "base/input_data.h"
#include "cuda_graphs_cases.h"
#include "diff/step_samples.h"
#include "facts/graph_alignment.h"
#include "importers/importer.h"
#include "importers/recorder/recorder_importer.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using namespace cuda_graphs_test;  // NOLINT(build/namespaces)

const Finding* FindingById(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// graph_recapture: a loop that captures and instantiates a graph again in iterations after the
// first. Step 0's capture (warm-up) is left out; steps 2 and 3 capture again (a new batch size);
// the host time is each capture's span plus the instantiation after it.
TEST(CudaGraphs, RecaptureInsideTheLoopIsAFinding) {
  auto build = [](bool recapture) {
    testing::TraceFixture f;
    f.Device(0);
    for (int step = 0; step < 4; ++step) {
      const TimeNs s = step * 10'000;
      f.Range(fmt::format("ProfilerStep#{}", step), s, s + 9'999, RangeKind::kUserAnnotation);
      if (step == 0 || (recapture && step >= 2)) {
        f.Api("cudaStreamBeginCapture", s + 10, s + 20);
        f.Api("cudaLaunchKernel", s + 30, s + 40);  // captured: no kernel runs
        f.Api("cudaStreamEndCapture", s + 1'000, s + 1'100);
        f.Api("cudaGraphInstantiateWithFlags", s + 1'200, s + 3'200);
      }
      f.Api("cudaGraphLaunch", s + 4'000, s + 4'010);
      f.Launch("gemm", s + 4'020, s + 4'030, s + 4'100, s + 9'000);
    }
    return f.Build();
  };
  const Trace quiet = build(false);
  StatusOr<std::vector<Finding>> none = ComputeFindings(*testing::Ctx(quiet));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(FindingById(*none, "graph_recapture"), nullptr);  // step 0's capture is warm-up

  const Trace loud = build(true);
  StatusOr<std::vector<Finding>> found = ComputeFindings(*testing::Ctx(loud));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  const Finding* f = FindingById(*found, "graph_recapture");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);  // 2 of 3 iterations after the first
  EXPECT_EQ(f->estimated_savings_ns, 2 * ((1'100 - 10) + (3'200 - 1'200)));
  EXPECT_EQ(f->spans.size(), 4u);
  EXPECT_NE(f->title.find("2 captures and 2 instantiations in 2 of 3 iterations"),
            std::string::npos)
      << f->title;
}

// Issue 29, the recorder: a .slrec holding the same graph replay and its graph node records gives
// the NVTX projection and the cuda_graphs table the program's truth, as the nsys export does; the
// node records come after every kernel in the file. Without them, the same kernels are reported as
// lacking a capture and no range is credited through one: they reach the layers by alignment with
// the eager step instead.
TEST(CudaGraphs, RecorderNodeRecordsAttributeReplayedKernelsToTheirCaptureRanges) {
  const std::string plain = PlainCopy(kData + "nsys/graph_decode_node_h100.sqlite.gz", "slrec");
  SlrecFromExport conv(plain);
  const std::string bytes = conv.Bytes();
  std::filesystem::remove(plain);
  ASSERT_EQ(conv.graph_kernels(), 12 * 279);
  ASSERT_EQ(conv.node_records(), 850);
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "graph_decode.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 0);

  const CudaGraphsResult g = ComputeCudaGraphs(*t);
  EXPECT_EQ(g.graph_kernels, 12 * 279);
  EXPECT_EQ(g.with_capture, g.graph_kernels);
  EXPECT_EQ(g.in_ranges, g.graph_kernels);
  EXPECT_EQ(g.rows.size(), 18u);
  for (int layer = 0; layer < 8; ++layer) {
    const std::string l = "capture > layer_" + std::to_string(layer);
    const CaptureRangeRow* a = Row(g, l + " > attention");
    const CaptureRangeRow* m = Row(g, l + " > mlp");
    ASSERT_NE(a, nullptr) << l;
    ASSERT_NE(m, nullptr) << l;
    EXPECT_EQ(a->nodes, 18) << l;
    EXPECT_EQ(m->nodes, 15) << l;
    EXPECT_EQ(a->kernels, 12 * 18) << l;
    EXPECT_DOUBLE_EQ(a->replays, 12.0);
    EXPECT_DOUBLE_EQ(a->eager_kernels_per_instance, 18.0) << l;
  }
  ASSERT_NE(Row(g, "capture > head"), nullptr);
  EXPECT_EQ(Row(g, "capture > head")->nodes, 13);

  StatusOr<NvtxProjectionResult> r = ComputeNvtxProjection(*testing::Ctx(*t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->graph_kernels, 12 * 279);
  EXPECT_EQ(r->kernels_with_capture, r->graph_kernels);
  EXPECT_EQ(r->kernels_by_capture, r->graph_kernels);
  auto group = [&](const Trace& trace, const NvtxProjectionResult& p, const std::string& name,
                   int depth) -> const NvtxRangeGroup* {
    for (const NvtxRangeGroup& x : p.groups) {
      if (trace.str(x.name) == name && x.depth == depth) return &x;
    }
    return nullptr;
  };
  const NvtxRangeGroup* attention = group(*t, *r, "attention", 2);
  const NvtxRangeGroup* mlp = group(*t, *r, "mlp", 2);
  ASSERT_NE(attention, nullptr);
  ASSERT_NE(mlp, nullptr);
  // Each range name holds the replays' kernels (through the capture) and the eager steps'.
  EXPECT_EQ(attention->work.kernel_count, 2 * 12 * 8 * 18);
  EXPECT_EQ(mlp->work.kernel_count, 2 * 12 * 8 * 15);
  for (int layer = 0; layer < 8; ++layer) {
    const NvtxRangeGroup* l = group(*t, *r, "layer_" + std::to_string(layer), 1);
    ASSERT_NE(l, nullptr) << layer;
    EXPECT_EQ(l->work.kernel_count, 2 * 12 * (18 + 15)) << layer;
  }

  // The same file without its node records (a recording made before they were written).
  const std::string without = bytes.substr(
      0, bytes.size() - [&] {
        // The last chunk holds the node records and the end record: drop it.
        size_t pos = recfmt::kFileHeaderBytes, last = pos;
        while (pos < bytes.size()) {
          uint32_t size;
          std::memcpy(&size, bytes.data() + pos + 4, 4);
          last = pos;
          pos += recfmt::kChunkHeaderBytes + size;
        }
        return bytes.size() - last;
      }());
  StatusOr<Trace> old = ImportRecorderBytes(without, "old.slrec");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 12 * 279);
  const CudaGraphsResult og = ComputeCudaGraphs(*old);
  EXPECT_EQ(og.graph_kernels, 12 * 279);
  EXPECT_EQ(og.with_capture, 0);
  StatusOr<NvtxProjectionResult> o = ComputeNvtxProjection(*testing::Ctx(*old), {});
  ASSERT_TRUE(o.ok());
  // No capture point: the replays are aligned with the eager step instead, and the projection
  // takes the same ranges through their eager counterparts.
  EXPECT_EQ(o->kernels_by_capture, 0);
  EXPECT_EQ(o->kernels_by_alignment, 12 * (279 - 2));
  const NvtxRangeGroup* old_attention = group(*old, *o, "attention", 2);
  ASSERT_NE(old_attention, nullptr);
  EXPECT_EQ(old_attention->work.kernel_count, 2 * 12 * 8 * 18);
}

// The verdict's per-iteration parts (diff/step_samples.h) over the graph steps: the replayed
// kernels count in the layer that captured them (`layer_N`), below the capture's own range, not
// all in the graph launch's step; only the kernels captured outside every layer stay in (step).
TEST(CudaGraphs, StepPartsOfGraphStepsAreByTheLayerThatCaptured) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  AnalyzeOptions options;
  options.iterations_regex = "graph_step_(\\d+)";
  StatusOr<RunSamples> run = CollectRunSamples(*testing::Ctx(*t, options));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->iterations(), 12u);
  double layer_gemm_ns = 0;
  for (size_t p = 0; p < run->parts.size(); ++p) {
    const StepPart& part = run->parts[p];
    if (part.kind != StepPart::Kind::kGpu) continue;
    EXPECT_NE(part.range, "capture") << part.Label();
    // The graph's GEMMs and attention kernels were all captured inside a layer; the step's own
    // eager work (input copies, sampling) stays in (step).
    if (part.range == kStepRange) {
      EXPECT_NE(part.what, "GEMM") << part.Label();
      EXPECT_NE(part.what, "attention") << part.Label();
    }
    if (part.range == "layer_N" && part.what == "GEMM") {
      for (double v : run->part_ns[p]) layer_gemm_ns += v;
    }
  }
  EXPECT_GT(layer_gemm_ns, 0);

  // Graph-mode tracing: graph launches, but whole-graph rows, no graph kernels to label.
  StatusOr<Trace> whole = ImportTrace(kData + "nsys/graph_decode_graph_h100.sqlite.gz");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  StatusOr<RunSamples> whole_run = CollectRunSamples(*testing::Ctx(*whole, options));
  ASSERT_TRUE(whole_run.ok()) << whole_run.status().ToString();
  EXPECT_EQ(whole_run->iterations(), 12u);
}

// The program's two loops, graph replays and eager steps, are both kept: the main set (eager
// steps, the longer) and the other loop, each measured, so the diff compares each on its own. A
// given regex names one loop.
TEST(CudaGraphs, BothLoopsOfTheProgramAreFound) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::shared_ptr<AnalysisContext> context = testing::Ctx(*t, AnalyzeOptions());
  StatusOr<const IterationsResult*> its = context->loop().Iterations();
  ASSERT_TRUE(its.ok()) << its.status().ToString();
  ASSERT_EQ((*its)->sets.size(), 1u);
  EXPECT_EQ((*its)->sets[0].pattern, "eager_step_N");
  ASSERT_EQ((*its)->other_loops.size(), 1u);
  const IterationSet& graph = (*its)->other_loops[0];
  EXPECT_EQ(graph.pattern, "graph_step_N");
  ASSERT_EQ(graph.iterations.size(), 12u);
  EXPECT_EQ(graph.pid, (*its)->sets[0].pid);
  EXPECT_GT(graph.iterations[3].launched.gpu_time_ns(), 0);
  EXPECT_GT(graph.wall.count, 0);  // measured like a set, warm-up steps apart

  StatusOr<std::vector<RunSamples>> loops = CollectLoopSamples(*context);
  ASSERT_TRUE(loops.ok()) << loops.status().ToString();
  ASSERT_EQ(loops->size(), 2u);
  EXPECT_EQ((*loops)[0].pattern, "eager_step_N");
  EXPECT_EQ((*loops)[1].pattern, "graph_step_N");
  EXPECT_EQ((*loops)[1].iterations(), 12u);

  AnalyzeOptions given;
  given.iterations_regex = "graph_step_(\\d+)";
  auto given_context = testing::Ctx(*t, given);  // owns the result `one` points into
  StatusOr<const IterationsResult*> one = given_context->loop().Iterations();
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE((*one)->other_loops.empty());
}

// The export of a capture before the recording began: the same H100 export with its node
// creation rows deleted. The importer counts the graph kernels left without a capture
// (graph_kernels_without_capture), and the cuda_graphs section matches all of them with the eager
// step instead, layer by layer.

}  // namespace
}  // namespace sightline
