// Tests for the NVTX → GPU projection (analyses/nvtx_projection/nvtx_projection.h) and the range
// sweep under it (facts/launch_projection.h), on synthetic traces with known answers.
#include "analyses/nvtx_projection/nvtx_projection.h"

#include <gtest/gtest.h>

#include <random>

#include "facts/launch_projection.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::HostThread;
using testing::TraceFixture;
using testing::Where;

const NvtxRangeGroup* FindGroup(const Trace& trace, const NvtxProjectionResult& r,
                                std::string_view name, int depth) {
  for (const NvtxRangeGroup& g : r.groups) {
    if (trace.str(g.name) == name && g.depth == depth) return &g;
  }
  return nullptr;
}

NvtxProjectionResult Project(const Trace& t, NvtxProjectionOptions options = {}) {
  return testing::ValueOrDie(ComputeNvtxProjection(*Ctx(t), options));
}

TEST(NvtxProjection, NestedRangesAndTwoThreads) {
  const HostThread a{100, 100}, b{100, 200};
  Trace t = TraceFixture()
                .Range("outer", 0, 100, RangeKind::kNvtxPushPop, a)
                .Range("inner", 10, 50, RangeKind::kNvtxPushPop, a)
                .Range("inner", 60, 70, RangeKind::kNvtxPushPop, a)
                .Launch("k1", 5, 6, 200, 210, {}, a)      // outer only
                .Launch("k2", 20, 22, 210, 230, {}, a)    // inner #1 and outer
                .Launch("k3", 65, 66, 300, 305, {}, a)    // inner #2 and outer
                .Launch("k4", 100, 101, 400, 410, {}, a)  // at outer's end: outside
                .Range("outer", 0, 100, RangeKind::kNvtxPushPop, b)
                .Launch("k5", 30, 31, 500, 540, {}, b)           // outer on thread b
                .Launch("k6", 30, 31, 600, 601, {}, {200, 100})  // another process: outside
                .Kernel("orphan", 700, 750)                      // no launching call
                .Build();
  const NvtxProjectionResult r = Project(t);
  EXPECT_EQ(r.ranges, 4);
  ASSERT_EQ(r.groups.size(), 2u);

  const NvtxRangeGroup* outer = FindGroup(t, r, "outer", 0);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->count, 2);
  EXPECT_EQ(outer->cpu_total_ns, 200);
  EXPECT_EQ(outer->work.kernel_count, 4);
  EXPECT_EQ(outer->work.gpu_time_ns(), 10 + 20 + 5 + 40);
  EXPECT_EQ(outer->gpu_span_total_ns, (305 - 200) + (540 - 500));
  EXPECT_EQ(outer->path, "outer");

  const NvtxRangeGroup* inner = FindGroup(t, r, "inner", 1);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->count, 2);
  EXPECT_EQ(inner->cpu_total_ns, 40 + 10);
  EXPECT_EQ(inner->work.kernel_count, 2);
  EXPECT_EQ(inner->work.gpu_time_ns(), 20 + 5);
  EXPECT_EQ(inner->gpu_span_total_ns, 20 + 5);
  EXPECT_EQ(inner->path, "outer / inner");

  // Sorted by GPU time: outer first.
  EXPECT_EQ(&r.groups[0], outer);
  EXPECT_EQ(r.kernels, 7);
  EXPECT_EQ(r.kernels_in_ranges, 4);
  EXPECT_EQ(r.unlinked_kernels, 1);
  EXPECT_EQ(r.unlinked_kernel_time_ns, 50);
}

// Issue 34: 2,000 nested ranges make 2,000 groups (one per depth); each group's path keeps its
// outermost 3 and innermost 8 names and counts the rest, so that memory stays linear in the depth
// (whole paths took memory in its square: 1.4 GB for 20,000 nested ranges, 25 MB now).
TEST(NvtxProjection, DeepNestingKeepsPathsShort) {
  const HostThread a{100, 100};
  TraceFixture f;
  constexpr int kDepth = 2000;
  for (int i = 0; i < kDepth; ++i) {
    f.Range("r" + std::to_string(i), i, 2 * kDepth - i, RangeKind::kNvtxPushPop, a);
  }
  const Trace t = f.Build();
  const NvtxProjectionResult r = Project(t);
  ASSERT_EQ(r.groups.size(), static_cast<size_t>(kDepth));
  const NvtxRangeGroup* deepest = FindGroup(t, r, "r1999", kDepth - 1);
  ASSERT_NE(deepest, nullptr);
  EXPECT_EQ(deepest->path,
            "r0 / r1 / r2 / (1989 more) / r1992 / r1993 / r1994 / r1995 / r1996 / r1997 / r1998 / "
            "r1999");
  const NvtxRangeGroup* twelve = FindGroup(t, r, "r11", 11);  // 12 names: whole
  ASSERT_NE(twelve, nullptr);
  EXPECT_EQ(twelve->path, "r0 / r1 / r2 / r3 / r4 / r5 / r6 / r7 / r8 / r9 / r10 / r11");
  const NvtxRangeGroup* thirteen = FindGroup(t, r, "r12", 12);  // 13 names: 2 counted
  ASSERT_NE(thirteen, nullptr);
  EXPECT_EQ(thirteen->path, "r0 / r1 / r2 / (2 more) / r5 / r6 / r7 / r8 / r9 / r10 / r11 / r12");
}

// Issue 29: a kernel replayed from a CUDA graph counts in the ranges open at its launch and in
// those open when its node was captured; "main", around both, counts it once.
TEST(NvtxProjection, ReplayedKernelCountsWhereCapturedAndOnceAroundBoth) {
  const HostThread a{100, 100}, b{100, 101};
  Trace t = TraceFixture()
                .Range("main", 0, 1000, RangeKind::kNvtxPushPop, a)
                .Range("layer", 10, 20, RangeKind::kNvtxPushPop, a)
                .Range("replay", 500, 600, RangeKind::kNvtxPushPop, a)
                .Range("other_capture", 30, 40, RangeKind::kNvtxPushPop, b)
                .Launch("k", 550, 551, 700, 710, {}, a)  // captured at 15 in "layer"
                .Launch("g", 560, 561, 720, 730, {}, a)  // captured at 35 on thread b
                .Build();
  ASSERT_EQ(t.kernels.size(), 2u);
  const int64_t capture_at[2] = {15, 35};
  const HostThread capture_on[2] = {a, b};
  for (size_t i = 0; i < 2; ++i) {
    t.kernels.graph_node[i] = 100 + static_cast<int64_t>(i);
    t.kernels.capture_node[i] = 1 + static_cast<int64_t>(i);
    t.kernels.capture_ns[i] = capture_at[i];
    t.kernels.capture_pid[i] = capture_on[i].pid;
    t.kernels.capture_tid[i] = capture_on[i].tid;
  }
  const NvtxProjectionResult r = Project(t);
  EXPECT_EQ(r.graph_kernels, 2);
  EXPECT_EQ(r.kernels_with_capture, 2);
  EXPECT_EQ(r.kernels_in_ranges, 2);
  EXPECT_EQ(r.kernels_by_capture, 2);
  const NvtxRangeGroup* main = FindGroup(t, r, "main", 0);
  const NvtxRangeGroup* layer = FindGroup(t, r, "layer", 1);
  const NvtxRangeGroup* replay = FindGroup(t, r, "replay", 1);
  const NvtxRangeGroup* other = FindGroup(t, r, "other_capture", 0);
  ASSERT_TRUE(main && layer && replay && other);
  EXPECT_EQ(main->work.kernel_count, 2);  // not 3: k's two points are both inside
  EXPECT_EQ(main->work.gpu_time_ns(), 20);
  EXPECT_EQ(layer->work.kernel_count, 1);
  EXPECT_EQ(replay->work.kernel_count, 2);
  EXPECT_EQ(other->work.kernel_count, 1);
  EXPECT_EQ(other->work.gpu_time_ns(), 10);
}

TEST(NvtxProjection, NameNestedInItselfGetsOneRowPerDepth) {
  Trace t = TraceFixture()
                .Range("f", 0, 100)
                .Range("f", 10, 50)
                .Launch("k", 20, 21, 100, 130)
                .Launch("k", 60, 61, 130, 140)
                .Build();
  const NvtxProjectionResult r = Project(t);
  const NvtxRangeGroup* d0 = FindGroup(t, r, "f", 0);
  const NvtxRangeGroup* d1 = FindGroup(t, r, "f", 1);
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d0->work.gpu_time_ns(), 40);  // inclusive: both kernels, each once
  EXPECT_EQ(d1->work.gpu_time_ns(), 30);
  EXPECT_EQ(d1->path, "f / f");
}

TEST(NvtxProjection, CpuOpsExcludedByDefault) {
  Trace t = TraceFixture()
                .Range("ProfilerStep#1", 0, 200, RangeKind::kUserAnnotation)
                .Range("aten::mm", 10, 50, RangeKind::kCpuOp)
                .Range("forward", 20, 40, RangeKind::kUserAnnotation)
                .Launch("gemm", 30, 31, 100, 150)
                .Build();
  NvtxProjectionResult r = Project(t);
  EXPECT_EQ(r.ranges, 2);
  EXPECT_EQ(FindGroup(t, r, "aten::mm", 1), nullptr);
  // Depth counts only considered ranges: forward is directly under the step.
  const NvtxRangeGroup* fwd = FindGroup(t, r, "forward", 1);
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->work.kernel_count, 1);
  EXPECT_EQ(fwd->path, "ProfilerStep#1 / forward");

  NvtxProjectionOptions with_ops;
  with_ops.include_cpu_ops = true;
  r = Project(t, with_ops);
  EXPECT_EQ(r.ranges, 3);
  ASSERT_NE(FindGroup(t, r, "aten::mm", 1), nullptr);
  ASSERT_NE(FindGroup(t, r, "forward", 2), nullptr);
}

TEST(NvtxProjection, CrossingStartEndRangesAreEachExact) {
  Trace t = TraceFixture()
                .Range("a", 0, 50, RangeKind::kNvtxStartEnd)
                .Range("b", 30, 80, RangeKind::kNvtxStartEnd)
                .Launch("k", 10, 11, 100, 101)  // a
                .Launch("k", 40, 41, 110, 112)  // a and b
                .Launch("k", 60, 61, 120, 124)  // b
                .Build();
  const NvtxProjectionResult r = Project(t);
  const NvtxRangeGroup* a = FindGroup(t, r, "a", 0);
  const NvtxRangeGroup* b = FindGroup(t, r, "b", 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->work.kernel_count, 2);
  EXPECT_EQ(a->work.gpu_time_ns(), 1 + 2);
  EXPECT_EQ(b->work.kernel_count, 2);
  EXPECT_EQ(b->work.gpu_time_ns(), 2 + 4);
}

TEST(NvtxProjection, MemoryOperationsAndDomains) {
  TraceFixture f;
  f.Range("load", 0, 100, RangeKind::kNvtxPushPop, {}, "myapp");
  f.Api("cudaMemcpyAsync", 10, 20, ApiKind::kRuntime, {}, /*correlation=*/42);
  MemOpRow m;
  m.start_ns = 50;
  m.end_ns = 80;
  m.kind = MemOpKind::kHtoD;
  m.correlation = 42;
  f.builder().AddMemOp(m);
  Trace t = f.Build();
  const NvtxProjectionResult r = Project(t);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].work.memop_count, 1);
  EXPECT_EQ(r.groups[0].work.memop_time_ns, 30);
  EXPECT_EQ(r.groups[0].work.kernel_count, 0);
  EXPECT_EQ(r.groups[0].path, "myapp:load");
}

TEST(NvtxProjection, SectionTruncatesToTopN) {
  TraceFixture f;
  for (int i = 0; i < 5; ++i) {
    const TimeNs s = i * 100;
    f.Range("r" + std::to_string(i), s, s + 50);
    f.Launch("k", s + 1, s + 2, 1000 + s, 1000 + s + 10 * (i + 1));
  }
  f.Kernel("orphan", 5000, 5100);
  Trace t = f.Build();
  Report report;
  AnalyzeOptions options;
  options.top_n = 2;
  ASSERT_TRUE(RunNvtxProjectionSection(*Ctx(t, options), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "nvtx_projection");
  ASSERT_EQ(s.tables.size(), 1u);
  EXPECT_EQ(s.tables[0].rows.size(), 2u);
  EXPECT_EQ(s.tables[0].total_rows, 5);
  EXPECT_EQ(std::get<std::string>(s.tables[0].rows[0][0]), "r4");  // most GPU time first
  EXPECT_EQ(std::get<int64_t>(s.tables[0].rows[0][5]), 50);        // gpu_time_ns
  ASSERT_FALSE(s.notes.empty());  // the unprojectable kernel is mentioned
  EXPECT_NE(s.notes[0].find("1 kernels"), std::string::npos);
}

TEST(NvtxProjection, NoRangesIsNotAnError) {
  Trace t = TraceFixture().Launch("k", 0, 1, 2, 3).Build();
  Report report;
  ASSERT_TRUE(RunNvtxProjectionSection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  EXPECT_TRUE(report.sections[0].tables.empty());
  EXPECT_FALSE(report.sections[0].notes.empty());
}

// The sweep against a brute-force projection on random nested (and some crossing) ranges.
TEST(LaunchProjection, SweepMatchesBruteForce) {
  std::mt19937 rng(7);
  TraceFixture f;
  const HostThread threads[] = {{1, 1}, {1, 2}, {2, 1}};
  for (const HostThread& th : threads) {
    // Random nesting: a stack of open ranges; each step opens, closes or launches.
    std::vector<std::pair<TimeNs, int>> open;  // start, name
    TimeNs now = 0;
    for (int step = 0; step < 400; ++step) {
      now += 1 + rng() % 5;
      const int action = rng() % 4;
      if (action == 0 && open.size() < 6) {
        open.push_back({now, static_cast<int>(rng() % 4)});
      } else if (action == 1 && !open.empty()) {
        f.Range("r" + std::to_string(open.back().second), open.back().first, now,
                RangeKind::kNvtxPushPop, th);
        open.pop_back();
      } else {
        const TimeNs g = now * 3 + rng() % 50;
        f.Launch("k", now, now + 1 + rng() % 3, g, g + 1 + rng() % 20, {}, th);
      }
      if (rng() % 50 == 0) {  // a start/end range that may cross others
        f.Range("x", now, now + rng() % 40, RangeKind::kNvtxStartEnd, th);
      }
    }
    while (!open.empty()) {
      f.Range("r" + std::to_string(open.back().second), open.back().first, now + 1,
              RangeKind::kNvtxPushPop, th);
      open.pop_back();
    }
  }
  Trace t = f.Build();
  std::vector<int32_t> rows;
  for (size_t i = 0; i < t.ranges.size(); ++i) rows.push_back(static_cast<int32_t>(i));
  const LaunchIndex index(t);
  const RangeProjection p = ProjectRanges(t, index, rows);
  ASSERT_EQ(p.work.size(), rows.size());
  EXPECT_GT(t.diagnostics.Count(DiagCode::kRangeNotNested), 0);  // the test covers crossing ranges
  int64_t with_work = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int32_t row = rows[i];
    LaunchedWork expect;
    for (size_t k = 0; k < t.kernels.size(); ++k) {
      const int32_t call = t.kernels.launch_call[k];
      if (call == kNoRow || t.api_calls.pid[call] != t.ranges.pid[row] ||
          t.api_calls.tid[call] != t.ranges.tid[row]) {
        continue;
      }
      const TimeNs at = t.api_calls.start_ns[call];
      if (at < t.ranges.start_ns[row] || at >= t.ranges.end_ns[row]) continue;
      ++expect.kernel_count;
      expect.kernel_time_ns += t.kernels.dur_ns(k);
      expect.first_start_ns = std::min(expect.first_start_ns, t.kernels.start_ns[k]);
      expect.last_end_ns = std::max(expect.last_end_ns, t.kernels.end_ns[k]);
    }
    ASSERT_EQ(p.work[i].kernel_count, expect.kernel_count) << "range row " << row;
    ASSERT_EQ(p.work[i].kernel_time_ns, expect.kernel_time_ns) << "range row " << row;
    ASSERT_EQ(p.work[i].span_ns(), expect.span_ns()) << "range row " << row;
    with_work += !expect.empty();
  }
  EXPECT_GT(with_work, static_cast<int64_t>(rows.size() / 2));
}

// The sweep with second points against a brute-force projection: random nested and crossing
// ranges on two threads, a quarter of the kernels with a capture point (any thread, any time), a
// quarter with an aligned point (an eager counterpart's launch, in one of a few eager runs). A
// range holds a kernel when it holds its launch, its capture, or its aligned point without
// holding the whole eager run; once however many points it holds; the span is the launches'.
TEST(LaunchProjection, SecondPointsMatchBruteForce) {
  std::mt19937 rng(11);
  TraceFixture f;
  const HostThread threads[2] = {{100, 100}, {100, 101}};
  TimeNs now = 0;
  for (const HostThread& th : threads) {
    now = 0;
    std::vector<std::pair<TimeNs, int>> open;
    for (int step = 0; step < 1500; ++step) {
      now += 1 + static_cast<TimeNs>(rng() % 5);
      const int action = static_cast<int>(rng() % 4);
      if (action == 0 && open.size() < 6) {
        open.push_back({now, static_cast<int>(rng() % 4)});
      } else if (action == 1 && !open.empty()) {
        f.Range("r" + std::to_string(open.back().second), open.back().first, now,
                RangeKind::kNvtxPushPop, th);
        open.pop_back();
      } else {
        const TimeNs g = now * 3 + static_cast<TimeNs>(rng() % 50);
        f.Launch("k", now, now + 1, g, g + 1 + static_cast<TimeNs>(rng() % 20), {}, th);
      }
      if (rng() % 50 == 0) {
        f.Range("x", now, now + static_cast<TimeNs>(rng() % 40), RangeKind::kNvtxStartEnd, th);
      }
    }
    while (!open.empty()) {
      f.Range("r" + std::to_string(open.back().second), open.back().first, now + 1,
              RangeKind::kNvtxPushPop, th);
      open.pop_back();
    }
  }
  Trace t = f.Build();
  KernelTable& k = t.kernels;
  const ApiCallTable& api = t.api_calls;
  const size_t n = k.size();
  GraphAlignment alignment;
  alignment.counterpart.assign(n, kNoRow);
  alignment.eager_run.assign(n, -1);
  for (int run = 0; run < 6; ++run) {
    const TimeNs a = static_cast<TimeNs>(rng() % static_cast<uint64_t>(now));
    alignment.eager_runs.push_back({100, 100, a, a + static_cast<TimeNs>(rng() % 400)});
  }
  std::vector<size_t> plain;
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 2 == 0) plain.push_back(i);
  }
  std::vector<uint8_t> is_plain(n, 0);
  for (size_t i : plain) is_plain[i] = 1;
  int captured = 0, aligned = 0;
  for (size_t i = 0; i < n; ++i) {
    if (is_plain[i]) continue;
    if (rng() % 2 == 0) {
      const HostThread& th = threads[rng() % 2];
      k.graph_node[i] = 1000 + static_cast<int64_t>(i);
      k.capture_node[i] = 1 + static_cast<int64_t>(i);
      k.capture_ns[i] = static_cast<TimeNs>(rng() % static_cast<uint64_t>(now));
      k.capture_pid[i] = th.pid;
      k.capture_tid[i] = th.tid;
      ++captured;
    } else {
      alignment.counterpart[i] = static_cast<int32_t>(plain[rng() % plain.size()]);
      alignment.eager_run[i] = static_cast<int32_t>(rng() % alignment.eager_runs.size());
      ++aligned;
    }
  }
  std::vector<int32_t> rows;
  for (size_t i = 0; i < t.ranges.size(); ++i) rows.push_back(static_cast<int32_t>(i));
  const LaunchIndex index(t, LaunchPoints::kLaunchAndCapture, &alignment);
  EXPECT_EQ(index.captured_kernels(), captured);
  EXPECT_EQ(index.aligned_kernels(), aligned);
  const RangeProjection p = ProjectRanges(t, index, rows);
  ASSERT_EQ(p.work.size(), rows.size());
  int64_t by_alignment = 0, cut = 0;
  std::vector<uint8_t> held_aligned(n, 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const int32_t row = rows[i];
    const TimeNs rs = t.ranges.start_ns[row], re = t.ranges.end_ns[row];
    const int32_t pid = t.ranges.pid[row], tid = t.ranges.tid[row];
    auto holds = [&](int32_t p2, int32_t t2, TimeNs at) {
      return p2 == pid && t2 == tid && rs <= at && at < re;
    };
    LaunchedWork expect;
    for (size_t j = 0; j < n; ++j) {
      const int32_t call = k.launch_call[j];
      const bool launch = holds(api.pid[call], api.tid[call], api.start_ns[call]);
      bool second = false;
      if (k.capture_node[j] != 0) {
        second = holds(k.capture_pid[j], k.capture_tid[j], k.capture_ns[j]);
      } else if (alignment.counterpart[j] != kNoRow) {
        const int32_t ec = k.launch_call[alignment.counterpart[j]];
        const GraphAlignment::EagerRun& run = alignment.eager_runs[alignment.eager_run[j]];
        const bool at = holds(api.pid[ec], api.tid[ec], api.start_ns[ec]);
        const bool step = rs <= run.first_launch_ns && re > run.last_launch_ns;
        second = at && !step;
        cut += at && step;
        if (second) held_aligned[j] = 1;
      }
      if (!launch && !second) continue;
      ++expect.kernel_count;
      expect.kernel_time_ns += k.dur_ns(j);
      if (launch) {
        expect.first_start_ns = std::min(expect.first_start_ns, k.start_ns[j]);
        expect.last_end_ns = std::max(expect.last_end_ns, k.end_ns[j]);
      }
    }
    ASSERT_EQ(p.work[i].kernel_count, expect.kernel_count) << "range row " << row;
    ASSERT_EQ(p.work[i].kernel_time_ns, expect.kernel_time_ns) << "range row " << row;
    ASSERT_EQ(p.work[i].span_ns(), expect.span_ns()) << "range row " << row;
  }
  for (uint8_t h : held_aligned) by_alignment += h;
  EXPECT_GT(cut, 0);  // some aligned points lie in ranges holding their whole eager run
  EXPECT_GT(by_alignment, 0);
}

}  // namespace
}  // namespace sightline
