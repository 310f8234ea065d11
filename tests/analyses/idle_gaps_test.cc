// Tests for the idle-gap analysis (analyses/idle_gaps/idle_gaps.h): gaps, the threshold, the
// histogram and the cause of each gap, on a synthetic trace where every gap has one known cause.
#include "analyses/idle_gaps/idle_gaps.h"

#include <gtest/gtest.h>

#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::HostThread;
using testing::TraceFixture;
using testing::Where;

// Device 0, process 100. Each gap between GPU work has one cause:
//   [11000, 31500)  synchronize: cudaDeviceSynchronize covers most of it
//   [40000, 65000)  memcpy: a synchronous cudaMemcpy stages the copy that ends the gap
//   [69000, 75500)  launch: the host is inside a slow launch call
//   [76000, 121500) host: no API call for most of it
//   [130000, 150000) queued: the next kernel was launched long before
//   [160000, 161000) 1 us: below the 2 us threshold
//   [170000, 201000) other_api: cudaMalloc
Trace CausesTrace() {
  TraceFixture f;
  f.Launch("k1", 0, 500, 1000, 11000);
  f.Api("cudaDeviceSynchronize", 600, 30000);
  f.Launch("k2", 30500, 31000, 31500, 40000);
  f.Api("cudaMemcpy", 41000, 70000, ApiKind::kRuntime, {}, /*correlation=*/77);
  MemOpRow m;
  m.start_ns = 65000;
  m.end_ns = 69000;
  m.kind = MemOpKind::kDtoH;
  m.size_bytes = 1 << 20;
  m.correlation = 77;
  f.builder().AddMemOp(m);
  f.Launch("k3", 69500, 75000, 75500, 76000);
  f.Launch("k4", 120000, 121000, 121500, 130000);
  f.Launch("k5", 122000, 123000, 150000, 160000);
  f.Launch("k6", 124000, 125000, 161000, 170000);
  f.Api("cudaMalloc", 171000, 200000);
  f.Launch("k7", 200500, 201000, 201000, 210000);
  return f.Build();
}

IdleGapsResult Compute(const Trace& t, DurationNs min_gap = 2'000) {
  IdleGapsOptions options;
  options.min_gap_ns = min_gap;
  return testing::ValueOrDie(ComputeIdleGaps(*Ctx(t), options));
}

const IdleGap* GapAt(const IdleGapsResult& r, int device, TimeNs start) {
  for (const IdleGap& g : r.gaps) {
    if (g.device == device && g.start_ns == start) return &g;
  }
  return nullptr;
}

TEST(IdleGaps, CauseOfEachGap) {
  const Trace t = CausesTrace();
  const IdleGapsResult r = Compute(t);
  ASSERT_EQ(r.devices.size(), 1u);
  ASSERT_EQ(r.gaps.size(), 6u);
  struct Expect {
    TimeNs start, end;
    IdleCause cause;
    int8_t late;
  } const expected[] = {
      {11000, 31500, IdleCause::kSynchronize, 1}, {40000, 65000, IdleCause::kMemcpy, 1},
      {69000, 75500, IdleCause::kLaunch, 1},      {76000, 121500, IdleCause::kHost, 1},
      {130000, 150000, IdleCause::kQueued, 0},    {170000, 201000, IdleCause::kOtherApi, 1},
  };
  for (const Expect& e : expected) {
    const IdleGap* g = GapAt(r, 0, e.start);
    ASSERT_NE(g, nullptr) << e.start;
    EXPECT_EQ(g->end_ns, e.end) << e.start;
    EXPECT_EQ(g->cause, e.cause) << e.start << " got " << IdleCauseName(g->cause);
    EXPECT_EQ(g->launched_late, e.late) << e.start;
  }
  const IdleGap* sync = GapAt(r, 0, 11000);
  EXPECT_EQ(sync->sync_ns, 30000 - 11000);
  // The host was blocked in the synchronize when the GPU ran dry; no other gap starts so.
  EXPECT_TRUE(sync->after_sync);
  for (const IdleGap& g : r.gaps) EXPECT_EQ(g.after_sync, &g == sync) << g.start_ns;
  EXPECT_EQ(sync->launch_ns, 31000 - 30500);
  EXPECT_EQ(sync->host_ns, 20500 - 19000 - 500);
  EXPECT_EQ(t.str(sync->main_api), "cudaDeviceSynchronize");
  EXPECT_EQ(sync->main_api_ns, 19000);
  EXPECT_EQ(t.str(GapAt(r, 0, 170000)->main_api), "cudaMalloc");
  EXPECT_EQ(t.str(GapAt(r, 0, 76000)->main_api), "cudaLaunchKernel");  // 1 us of a 45.5 us gap
  // Neighbours: k1 ended the busy stretch, k2 began the next one.
  EXPECT_EQ(t.str(t.kernels.short_name[sync->prev_work]), "k1");
  EXPECT_EQ(t.str(t.kernels.short_name[sync->next_work]), "k2");
  // The memcpy gap ends with the copy (a memory operation).
  EXPECT_GE(GapAt(r, 0, 40000)->next_work, static_cast<int64_t>(t.kernels.size()));

  // Longest first.
  for (size_t i = 1; i < r.gaps.size(); ++i) EXPECT_GE(r.gaps[i - 1].dur_ns(), r.gaps[i].dur_ns());
  EXPECT_EQ(r.gaps[0].start_ns, 76000);

  const DeviceIdle& d = r.devices[0];
  EXPECT_EQ(d.first_start_ns, 1000);
  EXPECT_EQ(d.last_end_ns, 210000);
  EXPECT_EQ(d.gaps, 6);
  EXPECT_EQ(d.idle_ns, 20500 + 25000 + 6500 + 45500 + 20000 + 31000);
  EXPECT_EQ(d.short_gaps, 1);
  EXPECT_EQ(d.short_idle_ns, 1000);
  EXPECT_EQ(d.busy_ns, d.span_ns() - d.idle_ns - d.short_idle_ns);
  EXPECT_EQ(d.largest_gap_ns, 45500);
  EXPECT_EQ(d.gaps_after_sync, 1);
  EXPECT_EQ(d.idle_after_sync_ns, 20500);
  EXPECT_EQ(d.cause_ns[static_cast<int>(IdleCause::kHost)], 45500);
  EXPECT_EQ(d.cause_count[static_cast<int>(IdleCause::kQueued)], 1);
  // Histogram: one gap under 10 us, five in 10-100 us.
  EXPECT_EQ(d.bucket_count[0], 1);
  EXPECT_EQ(d.bucket_ns[0], 6500);
  EXPECT_EQ(d.bucket_count[1], 5);
  EXPECT_EQ(d.bucket_count[2] + d.bucket_count[3] + d.bucket_count[4], 0);
}

TEST(IdleGaps, MinGapThreshold) {
  const Trace t = CausesTrace();
  const IdleGapsResult r = Compute(t, 25'000);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].gaps, 3);  // 25000 (kept: >= threshold), 45500, 31000
  EXPECT_EQ(r.devices[0].idle_ns, 25000 + 45500 + 31000);
  EXPECT_EQ(r.devices[0].short_gaps, 4);
  ASSERT_NE(GapAt(r, 0, 40000), nullptr);

  const IdleGapsResult all = Compute(t, 0);
  EXPECT_EQ(all.devices[0].gaps, 7);
  EXPECT_EQ(all.devices[0].short_gaps, 0);
}

TEST(IdleGaps, BucketBoundaries) {
  EXPECT_EQ(GapBucketOf(2'000), 0);
  EXPECT_EQ(GapBucketOf(9'999), 0);
  EXPECT_EQ(GapBucketOf(10'000), 1);
  EXPECT_EQ(GapBucketOf(99'999), 1);
  EXPECT_EQ(GapBucketOf(100'000), 2);
  EXPECT_EQ(GapBucketOf(999'999), 2);
  EXPECT_EQ(GapBucketOf(1'000'000), 3);
  EXPECT_EQ(GapBucketOf(10'000'000), 4);
  EXPECT_EQ(GapBucketOf(5'000'000'000), 4);
}

TEST(IdleGaps, DevicesUseTheirOwnProcessesCalls) {
  // Process 100 drives device 0 and sits in a synchronize; process 200 drives device 1 and does
  // nothing recorded during device 1's gap. The synchronize must not explain device 1's gap.
  const HostThread p100{100, 100}, p200{200, 200};
  Trace t = TraceFixture()
                .Launch("a0", 0, 100, 1000, 2000, Where{0, 7}, p100)
                .Api("cudaStreamSynchronize", 150, 40000, ApiKind::kRuntime, p100)
                .Launch("a1", 40500, 41000, 41000, 50000, Where{0, 7}, p100)
                .Launch("b0", 0, 100, 1000, 3000, Where{1, 7}, p200)
                .Launch("b1", 39000, 39500, 40000, 50000, Where{1, 7}, p200)
                .Build();
  const IdleGapsResult r = Compute(t);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, 0);
  EXPECT_EQ(r.devices[1].device, 1);
  const IdleGap* g0 = GapAt(r, 0, 2000);
  const IdleGap* g1 = GapAt(r, 1, 3000);
  ASSERT_NE(g0, nullptr);
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ(g0->cause, IdleCause::kSynchronize);
  EXPECT_EQ(g1->cause, IdleCause::kHost);
  EXPECT_TRUE(g0->after_sync);
  EXPECT_FALSE(g1->after_sync);
  EXPECT_EQ(g1->sync_ns, 0);
  EXPECT_EQ(g1->dur_ns(), 37000);
}

TEST(IdleGaps, KeepLargestBoundsTheGapList) {
  TraceFixture f;
  for (int i = 0; i < 50; ++i) f.Kernel("k", i * 100'000, i * 100'000 + 1000 + i);
  Trace t = f.Build();
  IdleGapsOptions options;
  options.keep_largest = 3;
  const IdleGapsResult r = ComputeIdleGaps(*Ctx(t), options).value();
  EXPECT_EQ(r.devices[0].gaps, 49);
  ASSERT_EQ(r.gaps.size(), 3u);
  // Kernel i ends at i*100000 + 1000 + i, so the gap after kernel 0 is the longest.
  EXPECT_EQ(r.gaps[0].start_ns, 1000);
  EXPECT_EQ(r.gaps[1].start_ns, 100'000 + 1001);
  // No launching calls: the next work's launch is unknown, and nothing was recorded on the host.
  EXPECT_EQ(r.gaps[0].launched_late, -1);
  EXPECT_EQ(r.gaps[0].cause, IdleCause::kHost);
}

TEST(IdleGaps, Section) {
  const Trace t = CausesTrace();
  Report report;
  AnalyzeOptions options;
  options.top_n = 2;
  ASSERT_TRUE(RunIdleGapsSection(*Ctx(t, options), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "idle_gaps");
  const Table* largest = nullptr;
  const Table* causes = nullptr;
  for (const Table& tb : s.tables) {
    if (tb.key == "largest_gaps") largest = &tb;
    if (tb.key == "causes") causes = &tb;
  }
  ASSERT_NE(largest, nullptr);
  EXPECT_EQ(largest->rows.size(), 2u);
  EXPECT_EQ(largest->total_rows, 6);
  EXPECT_EQ(std::get<int64_t>(largest->rows[0][1]), 76000);  // relative to the trace begin (0)
  EXPECT_EQ(std::get<std::string>(largest->rows[0][3]), "host");
  ASSERT_NE(causes, nullptr);
  EXPECT_EQ(causes->rows.size(), 6u);
  EXPECT_EQ(std::get<std::string>(causes->rows[0][1]), "host");  // the most idle time first

  Report empty_report;
  ASSERT_TRUE(RunIdleGapsSection(*Ctx(TraceFixture().Build(), options), 0, empty_report).ok());
  EXPECT_FALSE(empty_report.sections[0].notes.empty());
}

}  // namespace
}  // namespace sightline
