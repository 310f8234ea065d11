// Node-traced replays without capture points matched with the eager runs of a second trace
// (facts/graph_kernel_paths.h, PathSource::kReference; `analyze --eager-reference`): the same
// program run eagerly, recorded separately. Only names and range paths cross between the traces,
// never times; a capture point wins over an eager run of the trace itself, which wins over the
// reference; kernels that find no counterpart are counted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "facts/graph_alignment.h"
#include "facts/graph_kernel_paths.h"
#include "model/trace_builder.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;

// One replay per graph launch: correlation `corr`, its kernels `names` from `t` on, 20 ns apart.
void Replay(TraceFixture& f, int64_t corr, TimeNs t, const std::vector<std::string>& names) {
  f.Api("cudaGraphLaunch", t, t + 10, ApiKind::kRuntime, {}, corr);
  TimeNs g = t + 100;
  for (const std::string& name : names) {
    f.Kernel(name, g, g + 10, {}, corr);
    g += 20;
  }
}

// The eager step of the reference, on its own clock (far from the analysed trace's times):
// step_0 > layer_0 > attention (a, b), layer_0 > mlp (c), head (d).
Trace Reference(TimeNs base = 5'000'000) {
  TraceFixture f;
  f.Range("step_0", base, base + 1'000);
  f.Range("layer_0", base + 10, base + 500);
  f.Range("attention", base + 20, base + 200);
  f.Launch("a", base + 30, base + 35, base + 40, base + 50);
  f.Launch("b", base + 60, base + 65, base + 70, base + 80);
  f.Range("mlp", base + 250, base + 450);
  f.Launch("c", base + 260, base + 265, base + 270, base + 290);
  f.Range("head", base + 600, base + 900);
  f.Launch("d", base + 610, base + 615, base + 620, base + 640);
  return f.Build();
}

std::string PathOf(const GraphKernelPaths& p, size_t row) {
  return p.path[row] >= 0 ? p.paths[p.path[row]] : std::string("(none)");
}

// Every replayed kernel takes the path of its counterpart's launch in the reference, below the
// reference's eager step (step_0 holds the whole run: it says nothing of one kernel).
TEST(GraphReference, ReplaysTakeTheRangePathsOfTheReferencesEagerRun) {
  TraceFixture f;
  f.Range("graph_step_0", 0, 900);
  Replay(f, 1, 10, {"a", "b", "c", "d"});
  f.Range("graph_step_1", 1'000, 1'900);
  Replay(f, 2, 1'010, {"a", "b", "c", "d"});
  const Trace trace = f.Build();
  const Trace reference = Reference();
  const GraphKernelPaths without = ComputeGraphKernelPaths(trace);
  EXPECT_TRUE(without.reference_alignment.counterpart.empty());
  for (PathSource s : without.source) EXPECT_EQ(s, PathSource::kNone);

  const GraphKernelPaths p = ComputeGraphKernelPaths(trace, &reference);
  EXPECT_EQ(p.alignment.kernels_matched, 0);  // no eager run in the trace itself
  EXPECT_TRUE(p.reference_alignment.reference);
  EXPECT_EQ(p.reference_alignment.kernels, 8);
  EXPECT_EQ(p.reference_alignment.kernels_matched, 8);
  EXPECT_EQ(p.reference_alignment.replays, 2);
  EXPECT_EQ(p.reference_alignment.replays_matched, 2);
  const KernelTable& k = trace.kernels;
  ASSERT_EQ(k.size(), 8u);
  for (size_t i = 0; i < k.size(); ++i) {
    EXPECT_EQ(p.source[i], PathSource::kReference) << i;
    const std::string name(trace.str(k.name[i]));
    const std::string want = name == "a" || name == "b" ? "layer_0 > attention"
                             : name == "c"              ? "layer_0 > mlp"
                                                        : "head";
    EXPECT_EQ(PathOf(p, i), want) << name;
    // The counterpart is the reference's kernel of the same name.
    EXPECT_EQ(reference.str(reference.kernels.name[p.reference_alignment.counterpart[i]]), name);
  }
  // The components name the reference's ranges.
  const std::vector<std::string_view>& names = p.components[p.path[0]];
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "layer_0");
  EXPECT_EQ(names[1], "attention");
  EXPECT_STREQ(PathSourceName(PathSource::kReference), "reference");
}

// A replay that differs from the reference's run in places keeps the matches of the rest and
// counts the others; a replay that matches at fewer than half its places is not matched at all,
// and its kernels stay without a path, counted.
TEST(GraphReference, MismatchedKernelsAreCountedAsUnmatched) {
  TraceFixture f;
  Replay(f, 1, 10, {"a", "b", "x", "c", "d"});  // x is not in the reference: 4 of 5
  Replay(f, 2, 1'010, {"p", "q", "r", "a"});    // 1 of 4: below half
  const Trace trace = f.Build();
  const Trace reference = Reference();
  const GraphKernelPaths p = ComputeGraphKernelPaths(trace, &reference);
  const GraphAlignment& a = p.reference_alignment;
  EXPECT_EQ(a.kernels, 9);
  EXPECT_EQ(a.replays, 2);
  EXPECT_EQ(a.replays_matched, 1);
  EXPECT_EQ(a.kernels_matched, 4);
  int64_t by_reference = 0, none = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const std::string name(trace.str(trace.kernels.name[i]));
    if (p.source[i] == PathSource::kReference) {
      ++by_reference;
      EXPECT_NE(name, "x");
    } else {
      ++none;
      EXPECT_EQ(p.source[i], PathSource::kNone) << name;
      EXPECT_EQ(p.path[i], -1) << name;
    }
  }
  EXPECT_EQ(by_reference, 4);
  EXPECT_EQ(none, 5);  // x, and p, q, r, a of the second replay
}

// A reference with no eager run of the replayed kernels (another program, or a graph-only trace)
// matches nothing: every kernel is counted as left without a path.
TEST(GraphReference, AReferenceWithoutAMatchingEagerRunMatchesNothing) {
  TraceFixture f;
  Replay(f, 1, 10, {"a", "b", "c", "d"});
  const Trace trace = f.Build();
  TraceFixture r;
  r.Range("step_0", 0, 1'000);
  r.Launch("u", 10, 15, 20, 30).Launch("v", 40, 45, 50, 60).Launch("w", 70, 75, 80, 90);
  const Trace other = r.Build();
  const GraphKernelPaths p = ComputeGraphKernelPaths(trace, &other);
  EXPECT_EQ(p.reference_alignment.kernels, 4);
  EXPECT_EQ(p.reference_alignment.kernels_matched, 0);
  EXPECT_EQ(p.reference_alignment.replays_matched, 0);
  for (PathSource s : p.source) EXPECT_EQ(s, PathSource::kNone);

  // A reference that replays the same graph (its kernels are graph kernels, not eager ones)
  // holds no eager run either.
  TraceFixture g;
  Replay(g, 9, 0, {"a", "b", "c", "d"});
  const Trace graphs_only = g.Build();
  const GraphKernelPaths q = ComputeGraphKernelPaths(trace, &graphs_only);
  EXPECT_EQ(q.reference_alignment.kernels_matched, 0);
  // The trace as its own reference adds nothing.
  const GraphKernelPaths self = ComputeGraphKernelPaths(trace, &trace);
  EXPECT_TRUE(self.reference_alignment.counterpart.empty());
}

// The order of the methods: a kernel with a capture point keeps it, a replay matched with an
// eager run of its own trace keeps that, and only the rest go to the reference.
TEST(GraphReference, CapturePointsAndTheTracesOwnEagerRunWin) {
  // The trace's own eager step, in other ranges than the reference's (own_a: a, b; own_b: c, d).
  TraceFixture f;
  f.Range("eager_step", 0, 900);
  f.Range("own_a", 15, 75).Range("own_b", 75, 200);
  f.Launch("a", 20, 25, 30, 40).Launch("b", 50, 55, 60, 70);
  f.Launch("c", 80, 85, 90, 100).Launch("d", 110, 115, 120, 130);
  f.Range("graph_step_0", 1'000, 1'900);
  Replay(f, 1, 1'010, {"a", "b", "c", "d"});  // matched with the eager step here
  Replay(f, 2, 2'010, {"e", "f", "g", "h"});  // no eager run here: goes to the reference
  Replay(f, 3, 3'010, {"a", "b", "c", "d"});  // given capture points below
  Trace trace = f.Build();
  // Replay 3's kernels were captured inside own_a (at 25, on the trace's thread).
  KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.correlation[i] != 3) continue;
    k.capture_node[i] = 100 + static_cast<int64_t>(i);
    k.capture_ns[i] = 25;
    k.capture_pid[i] = 100;
    k.capture_tid[i] = 100;
  }
  // The reference's step: e, f inside ref_a, g, h inside ref_b (a range holding the whole
  // matched run, e to h, would be the step, not a kernel's place).
  TraceFixture r;
  r.Range("step_0", 0, 1'000).Range("ref_a", 400, 600).Range("ref_b", 600, 800);
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    const TimeNs t = 20 + 100 * (name[0] - 'a');
    r.Launch(name, t, t + 5, t + 10, t + 20);
  }
  const Trace reference = r.Build();
  const GraphKernelPaths p = ComputeGraphKernelPaths(trace, &reference);
  EXPECT_EQ(p.alignment.replays_matched, 1);
  EXPECT_EQ(p.reference_alignment.replays, 1);  // only replay 2 was left to the reference
  EXPECT_EQ(p.reference_alignment.kernels_matched, 4);
  for (size_t i = 0; i < k.size(); ++i) {
    if (!p.graph[i]) continue;
    const std::string name(trace.str(k.name[i]));
    switch (k.correlation[i]) {
      case 1:
        EXPECT_EQ(p.source[i], PathSource::kAligned) << name;
        EXPECT_EQ(PathOf(p, i), name == "a" || name == "b" ? "own_a" : "own_b") << name;
        break;
      case 2:
        EXPECT_EQ(p.source[i], PathSource::kReference) << name;
        EXPECT_EQ(PathOf(p, i), name == "e" || name == "f" ? "ref_a" : "ref_b") << name;
        break;
      case 3:
        EXPECT_EQ(p.source[i], PathSource::kCapture) << name;
        EXPECT_EQ(PathOf(p, i), "eager_step > own_a") << name;
        break;
      default:
        ADD_FAILURE() << k.correlation[i];
    }
  }
}

}  // namespace
}  // namespace sightline
