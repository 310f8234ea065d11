// Tests for the threads analysis (analyses/threads/threads.h) and the gil_contention rule: GIL
// ranges as nsys writes them ("Holding GIL" / "Waiting for GIL" in the NVTX domain "GIL Trace"),
// the launching thread, who held the GIL while it waited, profiler threads never blamed; and the
// real GIL export.
#include "analyses/threads/threads.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "base/file_io.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::HostThread;
using testing::TraceFixture;

constexpr HostThread kMain{100, 100}, kResponder{100, 101}, kSampler{100, 102};

// Ten 1 ms steps launched from the main thread; in each, the main thread waits `wait_ns` for the
// GIL that the responder thread holds; the profiler's sampler holds it briefly too.
Trace GilTrace(DurationNs wait_ns) {
  TraceFixture f;
  f.Device(0);
  f.Thread(100, 100, "python3").Thread(100, 101, "responder").Thread(100, 102, "NSys PySampling");
  TimeNs t = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    f.Range("step " + std::to_string(i), t, t + 1'000'000, RangeKind::kNvtxPushPop, kMain);
    f.Launch("gemm", t + 10'000, t + 20'000, t + 20'000, t + 300'000, {}, kMain);
    f.Gil(GilState::kWaited, t + 400'000, t + 400'000 + wait_ns, kMain);
    f.Gil(GilState::kHeld, t + 390'000, t + 400'000 + wait_ns, kResponder);
    f.Gil(GilState::kHeld, t + 950'000, t + 960'000, kSampler);
    t += 1'000'000;
  }
  return f.Build();
}

TEST(Threads, LaunchingThreadGilAndHolders) {
  const Trace t = GilTrace(200'000);
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has_gil);
  EXPECT_EQ(r->main_tid, 100);
  EXPECT_EQ(r->main_waited_ns, 2'000'000);
  ASSERT_EQ(r->threads.size(), 3u);
  EXPECT_EQ(r->threads[0].tid, 100);
  EXPECT_EQ(r->threads[0].role, ThreadRole::kLaunching);
  EXPECT_EQ(r->threads[0].launches, 10);
  EXPECT_EQ(r->threads[2].role, ThreadRole::kProfiler);  // listed last
  ASSERT_EQ(r->holders.size(), 1u);
  EXPECT_EQ(r->holders[0].tid, 101);
  EXPECT_EQ(r->holders[0].held_while_waited_ns, 2'000'000);
}

TEST(Threads, GilContentionFiresAndStaysQuiet) {
  auto find = [](const Trace& t) -> std::optional<Finding> {
    StatusOr<std::vector<Finding>> v = ComputeFindings(*Ctx(t));
    EXPECT_TRUE(v.ok());
    for (const Finding& f : *v) {
      if (f.id == "gil_contention") return f;
    }
    return std::nullopt;
  };
  const Trace contended = GilTrace(200'000);  // 20% of each step
  std::optional<Finding> f = find(contended);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->estimated_savings_ns, 2'000'000);
  EXPECT_NE(f->title.find("thread 101 (responder)"), std::string::npos) << f->title;
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_FALSE(find(GilTrace(20'000)).has_value());  // 2%: below the threshold
}

// Per thread and iteration: in the one slow step the responder holds the GIL far longer than in
// the others, and the main thread waits for it; the table shows it against each thread's median.
TEST(Threads, PerThreadPerIterationMedianAgainstTheSlowest) {
  TraceFixture f;
  f.Device(0);
  f.Thread(100, 100, "python3").Thread(100, 101, "responder").Thread(100, 102, "NSys PySampling");
  TimeNs t = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    const bool slow = i == 6;
    const DurationNs wall = slow ? 2'000'000 : 1'000'000, hold = slow ? 1'200'000 : 100'000;
    f.Range("step " + std::to_string(i), t, t + wall, RangeKind::kNvtxPushPop, kMain);
    f.Launch("gemm", t + 10'000, t + 20'000, t + 20'000, t + 300'000, {}, kMain);
    f.Gil(GilState::kHeld, t + 300'000, t + 300'000 + hold, kResponder);
    f.Gil(GilState::kWaited, t + 350'000, t + 300'000 + hold, kMain);
    f.Gil(GilState::kHeld, t + 300'000 + hold, t + 300'000 + hold + 200'000, kMain);
    t += wall;
  }
  const Trace trace = f.Build();
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  const ThreadsPerIterationResult& p = r->per_thread_iteration;
  EXPECT_EQ(p.slowest_iteration, 6);
  EXPECT_EQ(p.slowest_wall_ns, 2'000'000);
  EXPECT_EQ(p.median_wall_ns, 1'000'000);
  ASSERT_EQ(p.threads.size(), 2u);  // the sampler did nothing: not listed
  EXPECT_EQ(p.threads[0].tid, 100);
  EXPECT_EQ(p.threads[0].gil_waited.median_ns, 50'000);
  EXPECT_EQ(p.threads[0].gil_waited.slowest_ns, 1'150'000);
  EXPECT_EQ(p.threads[0].gil_held.slowest_ns, 200'000);
  EXPECT_EQ(p.threads[1].tid, 101);
  EXPECT_EQ(p.threads[1].gil_held.median_ns, 100'000);
  EXPECT_EQ(p.threads[1].gil_held.slowest_ns, 1'200'000);
  EXPECT_EQ(p.threads[1].gil_waited.slowest_ns, 0);
  Report report;
  report.inputs.emplace_back();
  ASSERT_TRUE(RunThreadsSection(*Ctx(trace), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Table* table = nullptr;
  for (const Table& x : report.sections[0].tables) {
    if (x.key == "threads_per_iteration") table = &x;
  }
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->rows.size(), 2u);
  EXPECT_NE(table->title.find("iteration 6"), std::string::npos) << table->title;
}

// NVTX time per thread and name: the main thread's "forward" (with a nested "forward" that must
// not count twice) and its "layer_N" ranges; the responder's "send_response", ten times longer in
// the slow step 6. The steps themselves are the iterations and are left out.
TEST(Threads, NvtxRangesPerThreadOverTheTraceAndPerIteration) {
  TraceFixture f;
  f.Device(0);
  f.Thread(100, 100, "python3").Thread(100, 101, "responder");
  TimeNs t = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    const bool slow = i == 6;
    const DurationNs wall = slow ? 2'000'000 : 1'000'000;
    f.Range("step " + std::to_string(i), t, t + wall, RangeKind::kNvtxPushPop, kMain);
    f.Range("forward", t + 10'000, t + 300'000, RangeKind::kNvtxPushPop, kMain);
    f.Range("layer_0", t + 20'000, t + 100'000, RangeKind::kNvtxPushPop, kMain);
    f.Range("forward", t + 50'000, t + 60'000, RangeKind::kNvtxPushPop, kMain);
    f.Range("layer_1", t + 100'000, t + 200'000, RangeKind::kNvtxPushPop, kMain);
    f.Launch("gemm", t + 210'000, t + 220'000, t + 220'000, t + 400'000, {}, kMain);
    f.Range("send_response", t + 500'000, t + (slow ? 1'500'000 : 600'000), RangeKind::kNvtxPushPop,
            kResponder);
    f.Gil(GilState::kHeld, t + 500'000, t + 510'000, kResponder);
    t += wall;
  }
  const Trace trace = f.Build();
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  const ThreadRangesResult& x = r->ranges;
  EXPECT_TRUE(x.per_iteration);
  EXPECT_EQ(x.slowest_iteration, 6);
  ASSERT_EQ(x.rows.size(), 3u);
  // The launching thread first, its names by total.
  EXPECT_EQ(x.rows[0].tid, 100);
  EXPECT_EQ(x.rows[0].name, "forward");
  EXPECT_EQ(x.rows[0].count, 20);
  EXPECT_EQ(x.rows[0].total_ns, 10 * 290'000);  // the nested one adds nothing
  EXPECT_EQ(x.rows[0].per_iteration.median_ns, 290'000);
  EXPECT_EQ(x.rows[0].per_iteration.slowest_ns, 290'000);
  EXPECT_EQ(x.rows[1].name, "layer_N");
  EXPECT_EQ(x.rows[1].count, 20);
  EXPECT_EQ(x.rows[1].total_ns, 10 * 180'000);
  EXPECT_EQ(x.rows[2].tid, 101);
  EXPECT_EQ(x.rows[2].thread, "responder");
  EXPECT_EQ(x.rows[2].name, "send_response");
  EXPECT_EQ(x.rows[2].total_ns, 9 * 100'000 + 1'000'000);
  EXPECT_EQ(x.rows[2].per_iteration.median_ns, 100'000);
  EXPECT_EQ(x.rows[2].per_iteration.slowest_ns, 1'000'000);
  for (const ThreadRangeRow& row : x.rows) EXPECT_EQ(row.name.find("step"), std::string::npos);

  Report report;
  report.inputs.emplace_back();
  ASSERT_TRUE(RunThreadsSection(*Ctx(trace), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Table* table = nullptr;
  for (const Table& tb : report.sections[0].tables) {
    if (tb.key == "thread_ranges") table = &tb;
  }
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 3u);
  ASSERT_EQ(table->columns.back().key, "iteration_slowest_ns");
  EXPECT_EQ(std::get<std::string>(table->rows[2][3]), "send_response");
  EXPECT_EQ(std::get<int64_t>(table->rows[2].back()), 1'000'000);
  EXPECT_NE(table->note.find("iteration 6"), std::string::npos) << table->note;
}

// More names on a thread than the table keeps: the longest stay, the rest are counted.
TEST(Threads, NvtxRangesPerThreadKeepTheLongestNames) {
  TraceFixture f;
  f.Device(0);
  f.Thread(100, 100, "python3");
  f.Launch("gemm", 10, 20, 20, 40, {}, kMain);
  f.Gil(GilState::kHeld, 0, 5, kMain);
  const char* names[] = {"a", "b", "c", "d", "e", "f", "g"};
  TimeNs t = 1'000;
  for (int i = 0; i < 7; ++i) {
    f.Range(names[i], t, t + 100 * (i + 1), RangeKind::kNvtxStartEnd, kMain);
    t += 10'000;
  }
  const Trace trace = f.Build();
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  const ThreadRangesResult& x = r->ranges;
  EXPECT_FALSE(x.per_iteration);
  ASSERT_EQ(x.rows.size(), kRangeNamesPerThread);
  EXPECT_EQ(x.rows[0].name, "g");
  EXPECT_EQ(x.rows[0].total_ns, 700);
  EXPECT_EQ(x.rows.back().name, "c");
  EXPECT_EQ(x.names_left_out, 2);
}

TEST(Threads, NoGilRangesNoSection) {
  const Trace t = TraceFixture().Launch("gemm", 0, 5, 10, 30).Build();
  Report report;
  report.inputs.emplace_back();
  ASSERT_TRUE(RunThreadsSection(*Ctx(t), 0, report).ok());
  EXPECT_TRUE(report.sections.empty());
}

// The shared nsys 2025.3 export with -t python-gil (../shared/traces; gzip'd there).
TEST(ThreadsShared, RealGilExport) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string gz = dir + "/nsys_2025.3_h100_gil_pysampling_gpumetrics_memusage.sqlite.gz";
  StatusOr<std::string> bytes = ReadFileToString(gz);
  if (!bytes.ok()) GTEST_SKIP() << "the GIL export is absent";
  StatusOr<std::string> plain = GunzipToString(*bytes, gz);
  ASSERT_TRUE(plain.ok());
  const std::string path = testing::MakeTempDir() + "/gil.sqlite";
  ASSERT_TRUE(WriteFileAtomically(path, *plain).ok());
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // The GIL ranges are in the GIL table, counted, and not among the NVTX ranges.
  EXPECT_EQ(t->gil.size(), 30'935u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysGilRanges), 30'935);
  EXPECT_EQ(t->ranges.size(), 339u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRangeNotNested), 0);  // GIL ranges no longer cross
  StatusOr<ThreadsResult> r = ComputeThreads(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  // Measured: the python3 main thread (907) launches all GPU work, holds the GIL 5.08 s and waits
  // 58.77 ms; threads 950 and 949 hold it 27.47 and 14.01 ms of that wait; nsys's sampler (924)
  // waits 2.83 s and is listed as a profiler thread.
  EXPECT_EQ(r->main_tid, 907);
  EXPECT_NEAR(r->main_waited_ns / 1e6, 58.77, 0.01);
  ASSERT_GE(r->holders.size(), 2u);
  EXPECT_EQ(r->holders[0].tid, 950);
  const auto sampler = std::find_if(r->threads.begin(), r->threads.end(),
                                    [](const ThreadRow& x) { return x.tid == 924; });
  ASSERT_NE(sampler, r->threads.end());
  EXPECT_EQ(sampler->role, ThreadRole::kProfiler);
  // The host side beyond the GIL: every sample (with its stack), the OS calls of the process, the
  // off-CPU intervals, and the metrics the capture skipped.
  EXPECT_EQ(t->py_samples.size(), 1'129u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysPySamplesWithoutStack), 0);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNvtxMarkIgnored), 0);
  EXPECT_EQ(t->os_calls.size(), 12'918u);  // every OSRT_API row: all of pid 907
  EXPECT_GT(t->off_cpu.size(), 0u);
  EXPECT_EQ(t->cpu_samples.size(), 3'732u);  // every COMPOSITE_EVENTS row: all of pid 907
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysGpuMetricsSkipped), 10);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysCaptureProblem), 0);
  EXPECT_TRUE(r->has_os_calls);
  EXPECT_TRUE(r->has_off_cpu);
  EXPECT_FALSE(sampler->hot_frames.empty() && r->threads[0].hot_frames.empty());
  // OS call chains: SELECT count(*) FROM OSRT_API WHERE callchainId > 0 gives 229, and joining
  // OSRT_CALLCHAINS on callchainId 4,256 frames.
  int64_t chained = 0;
  for (size_t i = 0; i < t->os_calls.size(); ++i) chained += t->os_calls.frame_count[i] > 0;
  EXPECT_EQ(chained, 229);
  EXPECT_EQ(t->os_calls.frames.size(), 4'256u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysOsCallChains), 229);
  EXPECT_TRUE(r->has_os_call_chains);
  // NVTX time per thread: the main thread's longest name is the autograd ranges of aten::matmul
  // (160 ranges, 112.18 ms: SELECT count(*), sum(end - start) FROM NVTX_EVENTS WHERE eventType = 59
  // AND text LIKE 'aten::matmul, seq = %' AND globalTid & 16777215 = 907); the stepN ranges are the
  // iterations and are left out.
  ASSERT_FALSE(r->ranges.rows.empty());
  EXPECT_EQ(r->ranges.rows[0].tid, 907);
  EXPECT_EQ(r->ranges.rows[0].name, "aten::matmul, seq = N, op_id = N");
  EXPECT_EQ(r->ranges.rows[0].count, 160);
  EXPECT_EQ(r->ranges.rows[0].total_ns, 112'181'924);
  for (const ThreadRangeRow& row : r->ranges.rows) EXPECT_NE(row.name, "stepN");
}

}  // namespace
}  // namespace sightline
