// Tests for the host side beyond the GIL (issue 14): OS runtime calls, off-CPU time and Python
// samples in the trace model and the analysis context (Waits, HostWithin), the threads section's
// per-iteration and OS-wait tables, the rules gc_pauses, blocking_os_call and host_bound_pipeline
// (each fires and stays quiet), the outlier rule's attribution, and the shipped nsys capture of
// examples/host_loop (always present).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analyses/findings/findings.h"
#include "analyses/threads/os_call_chains.h"
#include "analyses/threads/threads.h"
#include "facts/intervals.h"
#include "importers/importer.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::HostThread;
using testing::TraceFixture;

constexpr HostThread kMain{100, 100}, kOther{100, 101};
constexpr TimeNs kStep = 1'000'000;  // 1 ms iterations
constexpr TimeNs kT0 = 10'000'000;

// Ten 1 ms iterations on the main thread; each launches one kernel that runs 20..`gpu_end_us` us
// into it. The callback adds what a test plants in iteration i starting at time t.
template <typename F>
Trace Loop(TimeNs gpu_end_us, F&& plant, int iterations = 10) {
  TraceFixture f;
  f.Device(0);
  f.Thread(100, 100, "python3").Thread(100, 101, "responder");
  TimeNs t = kT0;
  for (int i = 0; i < iterations; ++i) {
    const TimeNs len = plant(f, i, t);  // 0: the default length
    const TimeNs end = t + (len > 0 ? len : kStep);
    f.Range("iteration " + std::to_string(i), t, end, RangeKind::kNvtxPushPop, kMain);
    f.Launch("gemm", t + 10'000, t + 20'000, t + 20'000, t + gpu_end_us * 1'000, {}, kMain);
    t = end;
  }
  return f.Build();
}

const Finding* FindRule(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::vector<Finding> Findings(const Trace& trace) {
  auto c = Ctx(trace);
  return testing::ValueOrDie(ComputeFindings(*c));
}

int64_t Evidence(const Finding& f, std::string_view key) {
  for (const Fact& e : f.evidence) {
    if (e.key == key) return std::get<int64_t>(e.value);
  }
  ADD_FAILURE() << "no evidence " << key;
  return -1;
}

TEST(Intervals, SubtractIntervals) {
  const std::vector<Interval> a = {{0, 10}, {20, 30}, {40, 50}};
  const std::vector<Interval> b = {{5, 22}, {25, 26}, {45, 60}};
  const std::vector<Interval> want = {{0, 5}, {22, 25}, {26, 30}, {40, 45}};
  EXPECT_EQ(SubtractIntervals(a, b), want);
  EXPECT_EQ(SubtractIntervals(a, {}), a);
  EXPECT_TRUE(SubtractIntervals({}, b).empty());
  EXPECT_TRUE(SubtractIntervals({{5, 10}}, {{0, 20}}).empty());
}

TEST(HostSide, WaitingOsCalls) {
  EXPECT_TRUE(IsWaitingOsCall("poll"));
  EXPECT_TRUE(IsWaitingOsCall("pthread_cond_timedwait"));
  EXPECT_TRUE(IsWaitingOsCall("select"));
  EXPECT_FALSE(IsWaitingOsCall("open64"));
  EXPECT_FALSE(IsWaitingOsCall("mmap64"));
  EXPECT_FALSE(IsWaitingOsCall("ioctl"));
}

TEST(HostSide, OsWaitsLeaveOutCudaCallsAndGilWaits) {
  TraceFixture f;
  f.OsCall("poll", 100, 200, kMain);  // inside the sync below: the sync's
  f.Api("cudaStreamSynchronize", 90, 210, ApiKind::kRuntime, kMain);
  f.OsCall("pthread_cond_wait", 300, 400, kMain);  // half inside a GIL wait
  f.Gil(GilState::kWaited, 350, 450, kMain);
  f.OsCall("open64", 500, 600, kMain);  // works, does not wait
  f.OsCall("select", 700, 800, kMain);
  f.OffCpu(700, 780, kMain);
  const Trace t = f.Build();
  auto c = Ctx(t);
  const ThreadWaits& w = c->host().Waits(100, 100);
  const std::vector<Interval> want = {{300, 350}, {700, 800}};
  EXPECT_EQ(w.os_wait, want);
  EXPECT_EQ(TotalLength(w.off_cpu), 80);
  const HostBreakdown h = c->host().HostWithin(100, 100, 0, 1000);
  EXPECT_EQ(h.os_wait_ns, 150);
  EXPECT_EQ(h.gil_wait_ns, 100);
  EXPECT_EQ(h.sync_ns, 120);
  EXPECT_EQ(h.off_cpu_ns, 80);
  EXPECT_TRUE(c->host().Waits(100, 999).os_wait.empty());
}

TEST(HostSide, ThreadsSectionPerIterationAndOsWaits) {
  const Trace t = Loop(300, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    f.OsCall("select", t0 + 400'000, t0 + (i == 3 ? 900'000 : 500'000), kMain);
    f.PySample(t0 + 600'000, {"respond (server.py:12)", "run (threading.py:1)"}, kOther);
    f.PySample(t0 + 700'000, {"detok (server.py:40)", "respond (server.py:12)"}, kOther);
    f.PySample(t0 + 800'000, {"detok (server.py:40)", "respond (server.py:12)"}, kOther);
    return 0;
  });
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has_os_calls);
  EXPECT_TRUE(r->has_samples);
  ASSERT_EQ(r->main_os_waits.size(), 1u);
  EXPECT_EQ(r->main_os_waits[0].name, "select");
  EXPECT_EQ(r->main_os_waits[0].calls, 10);
  EXPECT_EQ(r->main_os_waits[0].total_ns, 9 * 100'000 + 500'000);
  EXPECT_EQ(r->main_os_waits[0].longest_ns, 500'000);
  const auto part = std::find_if(r->per_iteration.begin(), r->per_iteration.end(),
                                 [](const PerIterationHost& p) { return p.key == "os_wait_ns"; });
  ASSERT_NE(part, r->per_iteration.end());
  EXPECT_EQ(part->median_ns, 100'000);
  EXPECT_EQ(part->worst_ns, 500'000);
  EXPECT_EQ(part->worst_iteration, 3);
  const auto responder = std::find_if(r->threads.begin(), r->threads.end(),
                                      [](const ThreadRow& x) { return x.tid == 101; });
  ASSERT_NE(responder, r->threads.end());
  EXPECT_EQ(responder->py_samples, 30);
  EXPECT_EQ(responder->hot_frames, "detok (server.py:40) 67%, respond (server.py:12) 33%");
}

TEST(GcPauses, FiresForCollectionsInTheLoopAndStaysQuietOutside) {
  const Trace in_loop = Loop(300, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    if (i == 5 || i == 6) f.Gc(t0 + 350'000, t0 + 950'000, kMain);
    return 0;
  });
  const std::vector<Finding> fired = Findings(in_loop);
  const Finding* gc = FindRule(fired, "gc_pauses");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ(Evidence(*gc, "gc_ns"), 1'200'000);
  EXPECT_EQ(Evidence(*gc, "collections"), 2);
  EXPECT_EQ(gc->estimated_savings_ns, 1'200'000);  // the GPU was idle throughout
  EXPECT_NE(gc->where.find("iteration 5"), std::string::npos);

  // The same collection after the loop, and a short one inside it: quiet.
  const Trace outside = Loop(300, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    if (i == 9) f.Gc(t0 + 2'000'000, t0 + 3'000'000, kMain);
    if (i == 2) f.Gc(t0 + 400'000, t0 + 410'000, kMain);
    return 0;
  });
  EXPECT_EQ(FindRule(Findings(outside), "gc_pauses"), nullptr);
}

TEST(BlockingOsCall, FiresForWaitsOnTheLaunchingThreadOnly) {
  const Trace polls = Loop(300, [](TraceFixture& f, int, TimeNs t0) -> TimeNs {
    f.OsCall("select", t0 + 400'000, t0 + 900'000, kMain);
    return 0;
  });
  const std::vector<Finding> fired = Findings(polls);
  const Finding* os = FindRule(fired, "blocking_os_call");
  ASSERT_NE(os, nullptr);
  EXPECT_EQ(Evidence(*os, "os_wait_ns"), 5'000'000);
  EXPECT_EQ(os->estimated_savings_ns, 5'000'000);
  EXPECT_NE(os->title.find("select"), std::string::npos);

  // Inside a synchronize call (the sync's own wait), on another thread, or a call that does not
  // wait: quiet.
  const Trace quiet = Loop(300, [](TraceFixture& f, int, TimeNs t0) -> TimeNs {
    f.Api("cudaStreamSynchronize", t0 + 390'000, t0 + 910'000, ApiKind::kRuntime, kMain);
    f.OsCall("poll", t0 + 400'000, t0 + 900'000, kMain);
    f.OsCall("select", t0 + 400'000, t0 + 900'000, kOther);
    f.OsCall("open64", t0 + 920'000, t0 + 990'000, kMain);
    return 0;
  });
  EXPECT_EQ(FindRule(Findings(quiet), "blocking_os_call"), nullptr);
  // Without call chains the finding names no caller.
  for (const Fact& e : os->evidence) EXPECT_NE(e.key, "called_from");
}

// OS call chains as nsys writes them (OSRT_CALLCHAINS, innermost first: the OS function itself,
// then its callers; symbols of unresolved frames are addresses). The chains here are made up in
// that shape, not taken from a capture.
TEST(OsCallChains, CallerSkipsTheCLibraryAndUnresolvedFrames) {
  TraceFixture f;
  f.OsCall("pthread_cond_wait", 100, 200, kMain,
           {"pthread_cond_wait (libc.so.6)", "0x5fc201 (python3.12)",
            "__pthread_cond_wait_common (libpthread.so.0)", "take_gil (python3.12)",
            "PyEval_RestoreThread (python3.12)", "main (python3.12)"});
  f.OsCall("poll", 300, 400, kMain);  // no chain: shorter than nsys's backtrace threshold
  f.OsCall("read", 500, 600, kMain,
           {"__read (libc.so.6)", "__vdso_x ([vdso])", "0x1234 (python3.12)",
            "_dl_runtime_resolve (ld-linux-x86-64.so.2)", "0x5678 (python3.12)"});
  f.OsCall("write", 700, 800, kMain, {"__write (libc.so.6)", "0x0 ([Unknown])"});
  const Trace t = f.Build();
  EXPECT_EQ(OsCallCaller(t, 0), "take_gil (python3.12) < PyEval_RestoreThread (python3.12)");
  EXPECT_EQ(OsCallCaller(t, 0, 1), "take_gil (python3.12)");
  EXPECT_EQ(OsCallCaller(t, 1), "");
  EXPECT_EQ(OsCallCaller(t, 2), "0x1234 (python3.12)");  // nothing resolved: the module at least
  EXPECT_EQ(OsCallCaller(t, 3), "(unresolved)");
  OsCallers c;
  c.Add(t, 0, 300);
  c.Add(t, 1, 50);
  c.Add(t, 2, 100);
  EXPECT_EQ(c.calls, 3);
  EXPECT_EQ(c.without_chain, 1);
  EXPECT_EQ(c.chained_ns, 400);
  EXPECT_EQ(c.Top(2),
            "take_gil (python3.12) < PyEval_RestoreThread (python3.12) 75%, 0x1234 (python3.12) "
            "25%");
  EXPECT_EQ(c.Top(1), "take_gil (python3.12) < PyEval_RestoreThread (python3.12) 75%");
  EXPECT_EQ(OsCallers().Top(3), "");
  OsCallers small;
  small.Add(t, 0, 999);
  small.Add(t, 2, 1);
  EXPECT_EQ(small.Top(3), "take_gil (python3.12) < PyEval_RestoreThread (python3.12) 100%");
  EXPECT_TRUE(IsCRuntimeFrame("__poll (libc.so.6)"));
  EXPECT_TRUE(IsCRuntimeFrame("pthread_cond_wait (libpthread.so.0)"));
  EXPECT_FALSE(IsCRuntimeFrame("serve (libserver.so)"));
  EXPECT_FALSE(IsCRuntimeFrame("libc_like"));
}

// The launching thread waits in select in every iteration; seven of the ten calls carry a chain.
// The threads section and blocking_os_call name the caller and count the calls without a chain.
TEST(OsCallChains, ThreadsSectionAndBlockingOsCallNameTheCaller) {
  const Trace t = Loop(300, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    if (i < 7) {
      f.OsCall("select", t0 + 400'000, t0 + 900'000, kMain,
               {"select (libc.so.6)", "wait_for_request (libserver.so)", "serve (libserver.so)",
                "main (server)"});
    } else {
      f.OsCall("select", t0 + 400'000, t0 + 900'000, kMain);
    }
    return 0;
  });
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has_os_call_chains);
  ASSERT_EQ(r->main_os_waits.size(), 1u);
  EXPECT_EQ(r->main_os_waits[0].calls, 10);
  EXPECT_EQ(r->main_os_waits[0].with_chain, 7);
  EXPECT_EQ(r->main_os_waits[0].callers,
            "wait_for_request (libserver.so) < serve (libserver.so) 100%");
  Report report;
  report.inputs.emplace_back();
  ASSERT_TRUE(RunThreadsSection(*Ctx(t), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Table* waits = nullptr;
  for (const Table& x : report.sections[0].tables) {
    if (x.key == "launching_os_waits") waits = &x;
  }
  ASSERT_NE(waits, nullptr);
  ASSERT_EQ(waits->rows.size(), 1u);
  ASSERT_EQ(waits->columns.back().key, "callers");
  EXPECT_EQ(std::get<std::string>(waits->rows[0].back()),
            "wait_for_request (libserver.so) < serve (libserver.so) 100%");

  const std::vector<Finding> fired = Findings(t);
  const Finding* os = FindRule(fired, "blocking_os_call");
  ASSERT_NE(os, nullptr);
  EXPECT_EQ(Evidence(*os, "calls_without_chain"), 3);
  const auto called = std::find_if(os->evidence.begin(), os->evidence.end(),
                                   [](const Fact& e) { return e.key == "called_from"; });
  ASSERT_NE(called, os->evidence.end());
  EXPECT_EQ(std::get<std::string>(called->value),
            "wait_for_request (libserver.so) < serve (libserver.so) 100%");
  EXPECT_NE(os->where.find("called from wait_for_request (libserver.so)"), std::string::npos)
      << os->where;
}

TEST(HostBoundPipeline, FiresWhenTheGpuWaitsForTheHostAndNotWhenGpuBound) {
  // The GPU works 20..300 us of each 1 ms iteration; the responder holds the GIL while the main
  // thread waits for it 400..700 us.
  const Trace host_bound = Loop(300, [](TraceFixture& f, int, TimeNs t0) -> TimeNs {
    f.Gil(GilState::kWaited, t0 + 400'000, t0 + 700'000, kMain);
    f.Gil(GilState::kHeld, t0 + 390'000, t0 + 700'000, kOther);
    f.Range("handle_responses", t0 + 390'000, t0 + 700'000, RangeKind::kNvtxPushPop, kOther);
    return 0;
  });
  const std::vector<Finding> fired = Findings(host_bound);
  const Finding* hb = FindRule(fired, "host_bound_pipeline");
  ASSERT_NE(hb, nullptr);
  // Idle before the kernel (0..20 us, minus the launch call 10..20 us) and after it (300..1000).
  EXPECT_EQ(Evidence(*hb, "median_host_idle_ns"), 710'000);
  EXPECT_EQ(Evidence(*hb, "gil_wait_ns"), 10 * 300'000);
  EXPECT_EQ(Evidence(*hb, "own_host_ns"), 10 * 410'000);
  EXPECT_EQ(hb->estimated_savings_ns, 10 * 410'000);
  bool named = false;
  for (const Fact& e : hb->evidence) {
    if (e.key == "ranges") named = std::get<std::string>(e.value).starts_with("handle_responses");
  }
  EXPECT_TRUE(named);

  const Trace gpu_bound = Loop(990, [](TraceFixture&, int, TimeNs) -> TimeNs { return 0; });
  EXPECT_EQ(FindRule(Findings(gpu_bound), "host_bound_pipeline"), nullptr);
}

TEST(HostBoundPipeline, TakesOutOnlyTheLaunchingThreadsCallsThatMeetAStall) {
  // The GPU idles 300..1000 us of each iteration. The launching thread's calls: one 100..200 us,
  // inside the GPU work; one 250..400 us reaching 100 us into the stall; one 400..450 us touching
  // it. The responder's call 500..600 us is not the launching thread's and stays host-bound idle.
  const Trace t = Loop(300, [](TraceFixture& f, int, TimeNs t0) -> TimeNs {
    f.Api("cudaEventRecord", t0 + 100'000, t0 + 200'000, ApiKind::kRuntime, kMain);
    f.Api("cudaEventRecord", t0 + 250'000, t0 + 400'000, ApiKind::kRuntime, kMain);
    f.Api("cudaEventRecord", t0 + 400'000, t0 + 450'000, ApiKind::kRuntime, kMain);
    f.Api("cudaEventRecord", t0 + 500'000, t0 + 600'000, ApiKind::kRuntime, kOther);
    return 0;
  });
  const std::vector<Finding> fired = Findings(t);
  const Finding* hb = FindRule(fired, "host_bound_pipeline");
  ASSERT_NE(hb, nullptr);
  // 0..10 us before the launch call and 300..1000 us minus the calls' 300..450 us.
  EXPECT_EQ(Evidence(*hb, "median_host_idle_ns"), 10'000 + 550'000);
  EXPECT_EQ(Evidence(*hb, "host_idle_ns"), 10 * 560'000);
}

TEST(OutlierIterations, AttributesExtraTimeToOsWaitsAndLeavesTheRestUnexplained) {
  const Trace t = Loop(990, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    if (i == 7) {  // 5 ms: 3.5 ms in select, the rest unexplained
      f.OsCall("select", t0 + 1'000'000, t0 + 4'500'000, kMain);
      f.PySample(t0 + 4'700'000, {"tokenize (app.py:9)"}, kMain);
      return 5'000'000;
    }
    return 0;
  });
  const std::vector<Finding> fired = Findings(t);
  const Finding* o = FindRule(fired, "outlier_iterations");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(Evidence(*o, "os_wait_excess_ns"), 3'500'000);
  EXPECT_EQ(Evidence(*o, "unexplained_ns"), 500'000);
  EXPECT_NE(o->title.find("waiting in OS calls"), std::string::npos) << o->title;
  bool frames = false;
  for (const Fact& e : o->evidence) {
    if (e.key == "hot_frames")
      frames = std::get<std::string>(e.value) == "tokenize (app.py:9) 100%";
  }
  EXPECT_TRUE(frames);
}

// When no measured cause holds most of the extra time, the title still names the largest one and
// what is left, with their sizes, instead of a list of possibilities.
TEST(OutlierIterations, MinorityCauseIsNamedWithTheRest) {
  const Trace t = Loop(990, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    if (i == 7) {  // 5 ms: 1 ms in select, 3 ms unexplained
      f.OsCall("select", t0 + 1'000'000, t0 + 2'000'000, kMain);
      return 5'000'000;
    }
    return 0;
  });
  const std::vector<Finding> fired = Findings(t);
  const Finding* o = FindRule(fired, "outlier_iterations");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(Evidence(*o, "os_wait_excess_ns"), 1'000'000);
  EXPECT_NE(o->title.find("OS waits 1.00 ms"), std::string::npos) << o->title;
  EXPECT_NE(o->title.find("not covered by a measured cause"), std::string::npos) << o->title;
  EXPECT_EQ(o->title.find("a recompilation"), std::string::npos) << o->title;
}

// PyTorch's python_function ranges (with_stack) give a thread's hot frames by self time: a frame's
// duration less that of the Python frames it called, through operators in between.
TEST(HostSide, PythonFunctionSelfTime) {
  TraceFixture f;
  f.Device(0).Thread(100, 100, "python3");
  f.Launch("gemm", 50, 55, 60, 80, {}, kMain);
  f.Range("a.py(1): f", 0, 100, RangeKind::kPythonFunction, kMain);
  f.Range("aten::linear", 10, 80, RangeKind::kCpuOp, kMain);
  f.Range("b.py(2): g", 20, 80, RangeKind::kPythonFunction, kMain);
  const Trace t = f.Build();
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has_py_functions);
  ASSERT_FALSE(r->threads.empty());
  EXPECT_EQ(r->threads[0].hot_frames, "b.py(2): g 60%, a.py(1): f 40%");
}

// The threads section draws the slowest iteration beside a typical one, lane by lane.
TEST(HostSide, IterationTimelines) {
  const Trace t = Loop(300, [](TraceFixture& f, int i, TimeNs t0) -> TimeNs {
    f.Gil(GilState::kWaited, t0 + 400'000, t0 + 700'000, kMain);
    f.Gil(GilState::kHeld, t0 + 390'000, t0 + 700'000, kOther);
    f.Range("handle_responses", t0 + 390'000, t0 + 700'000, RangeKind::kNvtxPushPop, kOther);
    if (i == 6) {
      f.Gc(t0 + 1'000'000, t0 + 3'000'000, kMain);
      return 4'000'000;
    }
    return 0;
  });
  auto c = Ctx(t);
  Report report;
  ASSERT_TRUE(RunThreadsSection(*c, 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  ASSERT_EQ(s.timelines.size(), 2u);
  const Timeline& worst = s.timelines[0];
  EXPECT_EQ(worst.key, "worst_iteration");
  EXPECT_EQ(worst.start_ns, kT0 + 6 * kStep);
  EXPECT_EQ(worst.end_ns, kT0 + 6 * kStep + 4'000'000);
  auto lane = [](const Timeline& tl, std::string_view label) -> const TimelineLane* {
    for (const TimelineLane& l : tl.lanes) {
      if (l.label == label) return &l;
    }
    return nullptr;
  };
  const TimelineLane* gc = lane(worst, "garbage collection");
  ASSERT_NE(gc, nullptr);
  ASSERT_EQ(gc->spans.size(), 1u);
  EXPECT_EQ(gc->spans[0].end_ns - gc->spans[0].start_ns, 2'000'000);
  const TimelineLane* gpu = lane(worst, "GPU 0 busy");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->spans.size(), 1u);
  const Timeline& typical = s.timelines[1];
  EXPECT_EQ(typical.key, "typical_iteration");
  const TimelineLane* gil = lane(typical, "thread 100 (python3): GIL");
  ASSERT_NE(gil, nullptr);
  ASSERT_EQ(gil->spans.size(), 1u);
  EXPECT_EQ(gil->spans[0].kind, "gil_wait");
  const TimelineLane* responder = lane(typical, "thread 101 (responder): NVTX");
  ASSERT_NE(responder, nullptr);
  ASSERT_EQ(responder->spans.size(), 1u);
  EXPECT_EQ(responder->spans[0].label, "handle_responses");
}

// The shipped capture of examples/host_loop (nsys -t cuda,nvtx,osrt,python-gil --python-sampling,
// exported with --include-json=true): every OS call of the process and every sample is read, the
// stacks are unescaped, and the findings name the planted causes.
TEST(HostLoopSample, ImportsOsCallsAndSamplesAndNamesThePlantedCauses) {
  const std::string path =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/host_loop_h100.nsys.sqlite";
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->os_calls.size(), 18415u);  // SELECT count(*) FROM OSRT_API (one process)
  EXPECT_EQ(trace->py_samples.size(), 1377u);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysPySamples), 1377);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNvtxMarkIgnored), 0);
  int64_t with_stack = 0;
  bool escaped = false;
  for (size_t i = 0; i < trace->py_samples.size(); ++i) {
    with_stack += trace->py_samples.frame_count[i] > 0;
  }
  for (StringId f : trace->py_samples.frames) {
    escaped |= trace->str(f).find("&lt;") != std::string_view::npos;
  }
  EXPECT_EQ(with_stack, 1377);
  EXPECT_FALSE(escaped);
  auto c = Ctx(*trace);
  StatusOr<std::vector<Finding>> f = ComputeFindings(*c);
  ASSERT_TRUE(f.ok());
  for (const char* id : {"outlier_iterations", "gc_pauses", "gil_contention", "blocking_os_call",
                         "host_bound_pipeline"}) {
    EXPECT_NE(FindRule(*f, id), nullptr) << id;
  }
  const Finding* os = FindRule(*f, "blocking_os_call");
  ASSERT_NE(os, nullptr);
  EXPECT_NE(os->title.find("select"), std::string::npos) << os->title;
  // Call chains (OSRT_CALLCHAINS): SELECT count(*) FROM OSRT_API WHERE callchainId > 0 gives 293
  // calls, and joining OSRT_CALLCHAINS on callchainId 4,824 frames.
  int64_t chained = 0;
  for (size_t i = 0; i < trace->os_calls.size(); ++i) chained += trace->os_calls.frame_count[i] > 0;
  EXPECT_EQ(chained, 293);
  EXPECT_EQ(trace->os_calls.frames.size(), 4824u);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysOsCallChains), 293);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysOsCallChainMissing), 0);
  // The capture's threshold (META_DATA_CAPTURE OS_RUNTIME_OPTIONS:BACKTRACES_THRESHOLD_NS|80000).
  const auto chains_diag =
      std::find_if(trace->diagnostics.items().begin(), trace->diagnostics.items().end(),
                   [](const Diagnostic& d) { return d.id == DiagCode::kNsysOsCallChains; });
  ASSERT_NE(chains_diag, trace->diagnostics.items().end());
  EXPECT_EQ(chains_diag->detail, "backtrace threshold 80000 ns");
  const auto called = std::find_if(os->evidence.begin(), os->evidence.end(),
                                   [](const Fact& e) { return e.key == "called_from"; });
  EXPECT_NE(called, os->evidence.end());
  const Finding* gil = FindRule(*f, "gil_contention");
  ASSERT_NE(gil, nullptr);
  EXPECT_NE(gil->title.find("responder"), std::string::npos) << gil->title;
}

}  // namespace
}  // namespace sightline
