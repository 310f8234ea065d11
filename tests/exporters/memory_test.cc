// Tests for the GPU memory analysis (analyses/memory/memory.h) and its nsys import
// (CUDA_GPU_MEMORY_USAGE_EVENTS): the peak of the trace's own allocations, what held it, headroom.
#include "analyses/memory/memory.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyses/findings/findings.h"
#include "base/file_io.h"
#include "exporters/perfetto_json.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

TEST(Memory, PeakAndWhatHeldIt) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100", 132, 9, 0, int64_t{80} << 30);
  f.Api("cudaMalloc", 0, 10, ApiKind::kRuntime, {}, 7);
  auto event = [&f](TimeNs t, int64_t bytes, uint64_t address, int64_t corr = -1) {
    TraceBuilder::MemoryEventRow r;
    r.time_ns = t;
    r.device = 0;
    r.pid = 100;
    r.bytes = bytes;
    r.address = address;
    r.kind = MemoryKind::kDevice;
    r.correlation = corr;
    f.builder().AddMemoryEvent(r);
  };
  event(5, 1 << 20, 0x1000, 7);   // 1 MiB by cudaMalloc (correlation 7)
  event(20, 4 << 20, 0x2000);     // 4 MiB
  event(30, -(4 << 20), 0x2000);  // freed
  event(40, 2 << 20, 0x3000);     // 2 MiB: the peak stays at 5 MiB
  event(50, -(1 << 20), 0x9999);  // a free of memory allocated before the capture
  const Trace t = f.Build();
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceMemory& d = r->devices[0];
  EXPECT_EQ(d.allocations, 3);
  EXPECT_EQ(d.frees, 2);
  EXPECT_EQ(d.peak_bytes, 5 << 20);
  EXPECT_EQ(d.peak_ns, 20);
  EXPECT_EQ(d.end_bytes, 3 << 20);
  EXPECT_EQ(d.unmatched_frees, 1);
  EXPECT_EQ(d.total_bytes, int64_t{80} << 30);
  ASSERT_EQ(d.at_peak.size(), 2u);
  EXPECT_EQ(d.at_peak[0].bytes, 4 << 20);
  EXPECT_EQ(d.at_peak[1].what, "cudaMalloc");
}

// When the memory alive at the peak was allocated (analyses/memory/memory_phase.h): 8 steps named
// "step N" (10'000 + 1'000 N, each launching one kernel), the first of them slow (a warm-up); a
// graph captured on the launching thread at 5'000..6'000. Allocations: 64 MiB at 1'000 (start-up:
// the weights), 8 MiB inside the capture (the graph's pool), 4 MiB in the warm-up step, 2 MiB in a
// steady step, 1 MiB after the last step (the peak is at the end).
TEST(Memory, AliveAtThePeakByThePhaseThatAllocatedIt) {
  TraceFixture f;
  f.Device(0, "NVIDIA H200", 132, 9, 0, int64_t{140} << 30);
  f.Api("cudaStreamBeginCapture", 5'000, 5'010);
  f.Api("cudaStreamEndCapture", 5'990, 6'000);
  TimeNs t = 10'000;
  for (int i = 0; i < 8; ++i) {
    const TimeNs length = i == 0 ? 20'000 : 1'000;
    f.Range(fmt::format("step {}", i), t, t + length);
    f.Launch("decode", t + 10, t + 20, t + 30, t + 500);
    t += length;
  }
  auto event = [&f](TimeNs at, int64_t bytes, uint64_t address) {
    TraceBuilder::MemoryEventRow r;
    r.time_ns = at;
    r.device = 0;
    r.pid = 100;
    r.tid = 100;
    r.bytes = bytes;
    r.address = address;
    r.kind = MemoryKind::kDevice;
    f.builder().AddMemoryEvent(r);
  };
  event(1'000, 64 << 20, 0x1000);
  event(5'500, 8 << 20, 0x2000);
  event(15'000, 4 << 20, 0x3000);
  event(33'500, 2 << 20, 0x4000);
  event(t + 1'000, 1 << 20, 0x5000);
  const Trace trace = f.Build();
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  std::map<std::string, int64_t> by_phase;
  for (const AllocationGroup& g : r->devices[0].by_phase) by_phase[g.name] = g.bytes;
  EXPECT_EQ(by_phase["start-up (before the steps)"], 64 << 20);
  EXPECT_EQ(by_phase["graph capture"], 8 << 20);
  EXPECT_EQ(by_phase["warm-up steps"], 4 << 20);
  EXPECT_EQ(by_phase["steady steps"], 2 << 20);
  EXPECT_EQ(by_phase["after the last step"], 1 << 20);
  EXPECT_EQ(by_phase.size(), 5u);
}

// Without steps, no phase is claimed.
TEST(Memory, NoPhasesWithoutSteps) {
  TraceFixture f;
  f.Device(0);
  TraceBuilder::MemoryEventRow r;
  r.time_ns = 10;
  r.device = 0;
  r.pid = 100;
  r.bytes = 1 << 20;
  r.address = 0x1000;
  r.kind = MemoryKind::kDevice;
  f.builder().AddMemoryEvent(r);
  const Trace trace = f.Build();
  StatusOr<MemoryResult> m = ComputeMemory(*Ctx(trace), {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->devices.size(), 1u);
  EXPECT_TRUE(m->devices[0].by_phase.empty());
}

// Pinned (and pageable) host allocations that nsys reports beside the device's (cudaHostAlloc, a
// pinned staging buffer; 4 B on examples/samples/gpu_memory_h200.nsys.sqlite) take no device
// memory: not in the peak, the live allocations or the headroom; counted apart.
TEST(Memory, HostAllocationsAreNotDeviceMemory) {
  TraceFixture f;
  f.Device(0, "NVIDIA H200", 132, 9, 0, int64_t{140} << 30);
  auto event = [&f](TimeNs t, int64_t bytes, uint64_t address, MemoryKind kind) {
    TraceBuilder::MemoryEventRow r;
    r.time_ns = t;
    r.device = 0;
    r.pid = 100;
    r.bytes = bytes;
    r.address = address;
    r.kind = kind;
    f.builder().AddMemoryEvent(r);
  };
  event(5, 2 << 20, 0x1000, MemoryKind::kDevice);
  event(10, 512 << 20, 0x2000, MemoryKind::kPinned);  // larger than the device allocation
  event(15, 1 << 20, 0x3000, MemoryKind::kPageable);
  event(20, 3 << 20, 0x4000, MemoryKind::kDevice);
  event(30, -(512 << 20), 0x2000, MemoryKind::kPinned);
  const Trace t = f.Build();
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceMemory& d = r->devices[0];
  EXPECT_EQ(d.allocations, 2);
  EXPECT_EQ(d.frees, 0);
  EXPECT_EQ(d.peak_bytes, 5 << 20);
  EXPECT_EQ(d.end_bytes, 5 << 20);
  EXPECT_EQ(d.unmatched_frees, 0);
  ASSERT_EQ(d.at_peak.size(), 2u);
  EXPECT_EQ(d.at_peak[0].bytes, 3 << 20);
  EXPECT_EQ(r->host_allocations, 2);
  EXPECT_EQ(r->host_bytes, (512 << 20) + (1 << 20));
}

constexpr int64_t kMiB = int64_t{1} << 20;

std::string KinetoData(const char* name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

const Finding* FindFinding(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// tests/data/kineto/profile_memory.json (make_profile_memory.py states what it holds).
TEST(MemoryKineto, MemoryEventsImported) {
  StatusOr<Trace> t = ImportTrace(KinetoData("profile_memory.json"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const MemoryEventTable& m = t->memory_events;
  ASSERT_EQ(m.size(), 9u);  // 3 steps x (256 MiB alloc, 64 MiB alloc, 256 MiB free)
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kKinetoHostMemoryEvent), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kKinetoMemoryEventUnusable), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kKinetoUnmappedCpuInstantEvent), 0);
  EXPECT_EQ(m.bytes[0], 256 * kMiB);
  EXPECT_EQ(m.bytes[2], -256 * kMiB);  // Bytes negative on free
  EXPECT_EQ(m.address[0], m.address[2]);
  EXPECT_EQ(m.total_allocated[0], 356 * kMiB);
  EXPECT_EQ(m.total_reserved[0], 1024 * kMiB);
  EXPECT_EQ(m.device[0], 0);
  EXPECT_EQ(m.tid[0], 1);
  EXPECT_EQ(m.kind[0], MemoryKind::kDevice);
}

TEST(MemoryKineto, AllocatorTimelinePeakAndWhatHeldIt) {
  StatusOr<Trace> t = ImportTrace(KinetoData("profile_memory.json"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceMemory& d = r->devices[0];
  EXPECT_TRUE(d.allocator_totals);
  EXPECT_EQ(d.before_bytes, 100 * kMiB);
  // Each step leaks 64 MiB: 100 + 2 x 64 + 256 + 64 at step 2's aten::mm (2,350 us).
  EXPECT_EQ(d.peak_bytes, 548 * kMiB);
  EXPECT_EQ(d.peak_ns, 2'350'000);
  EXPECT_EQ(d.reserved_at_peak_bytes, 1536 * kMiB);
  EXPECT_EQ(d.max_reserved_bytes, 1536 * kMiB);
  EXPECT_EQ(d.end_reserved_bytes - d.first_reserved_bytes, 512 * kMiB);
  EXPECT_EQ(d.end_bytes, 292 * kMiB);
  EXPECT_EQ(d.at_peak_count, 4);
  EXPECT_EQ(d.at_peak_bytes, 448 * kMiB);  // the peak less what was there before the trace
  ASSERT_FALSE(d.at_peak.empty());
  EXPECT_EQ(d.at_peak[0].op, "aten::empty");
  EXPECT_EQ(d.at_peak[0].range, "ProfilerStep#2");
  ASSERT_EQ(d.by_op.size(), 2u);
  EXPECT_EQ(d.by_op[0].name, "aten::empty");
  EXPECT_EQ(d.by_op[0].bytes, 256 * kMiB);
  EXPECT_EQ(d.by_op[1].name, "aten::mm");
  EXPECT_EQ(d.by_op[1].allocations, 3);
  ASSERT_EQ(d.by_range.size(), 3u);
  EXPECT_EQ(d.by_range[0].name, "ProfilerStep#2");
  EXPECT_EQ(d.by_range[0].bytes, 320 * kMiB);
  // The timeline ends where the events do, reserved known throughout.
  ASSERT_EQ(d.timeline.size(), 9u);
  EXPECT_EQ(d.timeline.back().allocated, d.end_bytes);
  for (const MemoryPoint& p : d.timeline) EXPECT_GE(p.reserved, p.allocated);
}

TEST(MemoryKineto, FindingsFragmentationAndAllocInLoop) {
  StatusOr<Trace> t = ImportTrace(KinetoData("profile_memory.json"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto ctx = Ctx(*t);
  StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
  ASSERT_TRUE(findings.ok()) << findings.status().ToString();
  const Finding* frag = FindFinding(*findings, "memory_fragmentation");
  ASSERT_NE(frag, nullptr);  // 1,536 MiB reserved for 548 MiB allocated at the peak
  bool unused_checked = false;
  for (const Fact& e : frag->evidence) {
    if (e.key != "unused_bytes") continue;
    EXPECT_EQ(std::get<int64_t>(e.value), 988 * kMiB);
    unused_checked = true;
  }
  EXPECT_TRUE(unused_checked);
  const Finding* loop = FindFinding(*findings, "alloc_in_loop");
  ASSERT_NE(loop, nullptr);  // step 2's cudaMalloc and the allocator's growth; step 0 left out
  EXPECT_EQ(loop->estimated_savings_ns, 50'000);
  EXPECT_EQ(FindFinding(*findings, "memory_near_capacity"), nullptr);  // 1.5 GiB of 79 GiB
}

TEST(MemoryKineto, AllocInLoopLeavesTheFirstIterationOut) {
  TraceFixture f;
  f.Device(0);
  for (int step = 0; step < 3; ++step) {
    const TimeNs s = step * 1000;
    f.Range(fmt::format("ProfilerStep#{}", step), s, s + 999, RangeKind::kUserAnnotation);
    f.Launch("gemm", s + 10, s + 20, s + 100, s + 900);
  }
  f.Api("cudaMalloc", 50, 60);           // in step 0: warm-up, not counted
  f.Api("cudaMallocAsync", 1050, 1060);  // stream-ordered: not counted
  Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
  ASSERT_TRUE(findings.ok());
  EXPECT_EQ(FindFinding(*findings, "alloc_in_loop"), nullptr);
  TraceFixture g;
  g.Device(0);
  for (int step = 0; step < 3; ++step) {
    const TimeNs s = step * 1000;
    g.Range(fmt::format("ProfilerStep#{}", step), s, s + 999, RangeKind::kUserAnnotation);
    g.Launch("gemm", s + 10, s + 20, s + 100, s + 900);
  }
  g.Api("cudaFree", 2050, 2080);
  Trace t2 = g.Build();
  auto ctx2 = Ctx(t2);
  findings = ComputeFindings(*ctx2);
  ASSERT_TRUE(findings.ok());
  const Finding* loop = FindFinding(*findings, "alloc_in_loop");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->estimated_savings_ns, 30);
}

TEST(Memory, NearCapacity) {
  for (int64_t mib : {500, 950}) {
    TraceFixture f;
    f.Device(0, "NVIDIA H100", 132, 9, 0, int64_t{1} << 30);
    f.Launch("gemm", 0, 10, 100, 900);
    TraceBuilder::MemoryEventRow r;
    r.time_ns = 50;
    r.device = 0;
    r.bytes = mib * kMiB;
    r.address = 0x1000;
    f.builder().AddMemoryEvent(r);
    Trace t = f.Build();
    auto ctx = Ctx(t);
    StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
    ASSERT_TRUE(findings.ok());
    EXPECT_EQ(FindFinding(*findings, "memory_near_capacity") != nullptr, mib == 950) << mib;
  }
}

// nsys: the allocating thread comes from the correlated cudaMalloc; its NVTX ranges name the op.
TEST(Memory, AttributedThroughTheAllocatingCall) {
  TraceFixture f;
  f.Device(0);
  f.Range("forward", 0, 1000);
  f.Range("aten::empty", 100, 200);
  f.Api("cudaMalloc", 120, 150, ApiKind::kRuntime, {}, 7);
  TraceBuilder::MemoryEventRow r;
  r.time_ns = 130;
  r.device = 0;
  r.pid = 100;
  r.bytes = kMiB;
  r.address = 0x1000;
  r.correlation = 7;
  f.builder().AddMemoryEvent(r);
  const Trace t = f.Build();
  StatusOr<MemoryResult> m = ComputeMemory(*Ctx(t), {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->devices.at(0).at_peak.size(), 1u);
  EXPECT_EQ(m->devices[0].at_peak[0].op, "aten::empty");
  EXPECT_EQ(m->devices[0].at_peak[0].range, "forward");
  EXPECT_EQ(m->devices[0].at_peak[0].what, "cudaMalloc");
  EXPECT_FALSE(m->devices[0].allocator_totals);
}

// nsys --pytorch=autograd-nvtx: op ranges carry ", seq = N, op_id = N"; the op is the innermost
// of them (its name without the suffix), the range the innermost NVTX range that is not an op.
TEST(Memory, AutogradNvtxOpRanges) {
  TraceFixture f;
  f.Device(0);
  f.Range("step3", 0, 1000);
  f.Range("aten::matmul, seq = 0, op_id = 4", 50, 300);
  f.Range("aten::mm, seq = 0, op_id = 5", 100, 200);
  f.Api("cudaMalloc", 120, 150, ApiKind::kRuntime, {}, 9);
  TraceBuilder::MemoryEventRow r;
  r.time_ns = 130;
  r.device = 0;
  r.pid = 100;
  r.bytes = kMiB;
  r.address = 0x1000;
  r.correlation = 9;
  f.builder().AddMemoryEvent(r);
  const Trace t = f.Build();
  StatusOr<MemoryResult> m = ComputeMemory(*Ctx(t), {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->devices.at(0).at_peak.size(), 1u);
  EXPECT_EQ(m->devices[0].at_peak[0].op, "aten::mm");
  EXPECT_EQ(m->devices[0].at_peak[0].range, "step3");
  ASSERT_EQ(m->devices[0].by_op.size(), 1u);
  EXPECT_EQ(m->devices[0].by_op[0].name, "aten::mm");
}

TEST(MemoryKineto, ReportChartAndPerfettoCounters) {
  StatusOr<Trace> t = ImportTrace(KinetoData("profile_memory.json"));
  ASSERT_TRUE(t.ok());
  auto ctx = Ctx(*t);
  Report report;
  ASSERT_TRUE(RunMemorySection(*ctx, 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  ASSERT_EQ(s.series.size(), 1u);
  const Series& se = s.series[0];
  EXPECT_EQ(se.x.size(), se.y2.size());
  ASSERT_EQ(se.marks.size(), 1u);
  EXPECT_EQ(se.marks[0].y, static_cast<double>(548 * kMiB));
  PerfettoExportCounts counts;
  PerfettoExportOptions options;
  options.context = ctx.get();
  const std::string json = ExportPerfettoJson(*t, &counts, options);
  EXPECT_EQ(counts.memory_points, 9);
  EXPECT_NE(json.find("\"name\":\"GPU memory\",\"args\":{\"allocated\":"), std::string::npos);
}

TEST(MemoryShared, RealExport) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string gz = dir + "/nsys_2025.3_h100_gil_pysampling_gpumetrics_memusage.sqlite.gz";
  StatusOr<std::string> bytes = ReadFileToString(gz);
  if (!bytes.ok()) GTEST_SKIP() << "the export is absent";
  StatusOr<std::string> plain = GunzipToString(*bytes, gz);
  ASSERT_TRUE(plain.ok());
  const std::string path = testing::MakeTempDir() + "/mem.sqlite";
  ASSERT_TRUE(WriteFileAtomically(path, *plain).ok());
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->memory_events.size(), 62u);  // 53 allocations (15 device, 38 static), 9 frees
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceMemory& d = r->devices[0];
  EXPECT_EQ(d.allocations, 53);
  EXPECT_EQ(d.frees, 9);
  // Measured: the peak is the 2.53 GiB allocated before the first free, 512 MiB the largest block.
  EXPECT_EQ(d.peak_bytes, d.allocated_bytes);
  EXPECT_EQ(d.at_peak.at(0).bytes, int64_t{512} << 20);
  EXPECT_EQ(d.at_peak.at(0).what, "cudaMalloc");
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Stream-ordered pools (cudaMallocAsync): a pool's size is what it holds whether allocated from or
// not, so reserved = the pools' sizes + what was allocated outside them; a pool that keeps its
// memory after every free shows reserved far above allocated; a trim shrinks it.
TEST(Memory, PoolsMakeReservedAndAreListed) {
  TraceFixture f;
  f.Device(0, "NVIDIA H200", 132, 9, 0, int64_t{140} << 30);
  constexpr int64_t kMiB = 1 << 20;
  auto event = [&f](TimeNs t, int64_t bytes, uint64_t address, uint64_t pool, int64_t pool_size,
                    const char* source = "") {
    TraceBuilder::MemoryEventRow r;
    r.time_ns = t;
    r.device = 0;
    r.pid = 100;
    r.bytes = bytes;
    r.address = address;
    r.kind = MemoryKind::kDevice;
    r.pool = pool;
    r.pool_size = pool_size;
    if (*source != '\0') r.source = f.builder().Intern(source);
    f.builder().AddMemoryEvent(r);
  };
  event(10, 100 * kMiB, 0x1000, 0, -1, "/usr/lib/libnccl.so.2");  // cudaMalloc, outside pools
  event(20, 0, 0, 0xa000, 0);                                     // pool created
  event(30, 64 * kMiB, 0xb000, 0xa000, 64 * kMiB, "/opt/app/bin/server");
  event(40, 64 * kMiB, 0xc000, 0xa000, 128 * kMiB, "/opt/app/bin/server");  // the peak: 228 MiB
  event(50, -64 * kMiB, 0xb000, 0xa000, 128 * kMiB);  // freed, the pool keeps its memory
  event(60, -64 * kMiB, 0xc000, 0xa000, 128 * kMiB);
  event(70, 0, 0, 0xa000, 0);  // trimmed to 0
  Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<const MemoryResult*> r = CachedMemory(*ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->devices.size(), 1u);
  const DeviceMemory& d = (*r)->devices[0];
  EXPECT_EQ(d.peak_bytes, 228 * kMiB);
  EXPECT_EQ(d.peak_ns, 40);
  EXPECT_EQ(d.reserved_at_peak_bytes, 228 * kMiB);
  EXPECT_EQ(d.max_reserved_bytes, 228 * kMiB);
  EXPECT_EQ(d.end_bytes, 100 * kMiB);
  EXPECT_EQ(d.end_reserved_bytes, 100 * kMiB);  // after the trim
  ASSERT_EQ(d.timeline.size(), 7u);
  EXPECT_EQ(d.timeline[5].allocated, 100 * kMiB);  // both freed ...
  EXPECT_EQ(d.timeline[5].reserved, 228 * kMiB);   // ... the pool still holds 128 MiB
  ASSERT_EQ(d.pools.size(), 1u);
  const MemoryPool& p = d.pools[0];
  EXPECT_EQ(p.address, 0xa000u);
  EXPECT_EQ(p.allocations, 2);
  EXPECT_EQ(p.max_used_bytes, 128 * kMiB);
  EXPECT_EQ(p.max_size_bytes, 128 * kMiB);
  EXPECT_EQ(p.max_size_ns, 40);
  EXPECT_EQ(p.end_size_bytes, 0);
  EXPECT_EQ(p.shrinks, 1);
  // By library, basenames, largest first.
  ASSERT_EQ(d.by_source.size(), 2u);
  EXPECT_EQ(d.by_source[0].name, "server");
  EXPECT_EQ(d.by_source[0].bytes, 128 * kMiB);
  EXPECT_EQ(d.by_source[0].allocations, 2);
  EXPECT_EQ(d.by_source[1].name, "libnccl.so.2");
  ASSERT_FALSE(d.at_peak.empty());
  EXPECT_EQ(d.at_peak[0].source, "libnccl.so.2");
  EXPECT_FALSE(d.at_peak[0].pooled);
  EXPECT_TRUE(d.at_peak[1].pooled);
}

// Without pools or libraries nothing of the above appears: reserved stays unknown for CUDA calls.
TEST(Memory, NoPoolsNoReservedFromCudaCalls) {
  TraceFixture f;
  TraceBuilder::MemoryEventRow r;
  r.time_ns = 5;
  r.device = 0;
  r.pid = 1;
  r.bytes = 1 << 20;
  r.address = 0x10;
  r.kind = MemoryKind::kDevice;
  f.builder().AddMemoryEvent(r);
  Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<const MemoryResult*> res = CachedMemory(*ctx);
  ASSERT_TRUE(res.ok());
  const DeviceMemory& d = (*res)->devices.at(0);
  EXPECT_EQ(d.max_reserved_bytes, -1);
  EXPECT_TRUE(d.pools.empty());
  EXPECT_TRUE(d.by_source.empty());
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

const DeviceMemory& OnlyDevice(const MemoryResult& r) {
  EXPECT_EQ(r.devices.size(), 1u);
  return r.devices.at(0);
}

int64_t LibraryBytes(const DeviceMemory& d, std::string_view prefix) {
  int64_t bytes = 0;
  for (const AllocationGroup& g : d.by_source) {
    if (std::string_view(g.name).substr(0, prefix.size()) == prefix) bytes += g.bytes;
  }
  return bytes;
}

// memory_app on an H200 (cuda/recorder/tools/apps/memory_app.cu, run_memory.sh), recorded with
// `sightline record --cuda-memory-usage` and profiled with nsys --cuda-memory-usage=true: the
// program's own figures (tests/data/recorder/memory_app_h200.truth.json) hold in the recording,
// and the two tools agree.
TEST(Memory, H200MemoryAppMatchesTheProgramAndNsys) {
  StatusOr<Trace> rec =
      ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/memory_app_h200.slrec");
  StatusOr<Trace> nsys =
      ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/memory_app_h200.sqlite");
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  ASSERT_TRUE(nsys.ok()) << nsys.status().message();
  auto rc = Ctx(*rec);
  auto nc = Ctx(*nsys);
  StatusOr<const MemoryResult*> rr = CachedMemory(*rc);
  StatusOr<const MemoryResult*> nr = CachedMemory(*nc);
  ASSERT_TRUE(rr.ok() && nr.ok());
  const DeviceMemory& r = OnlyDevice(**rr);
  const DeviceMemory& n = OnlyDevice(**nr);
  // The program's truth: its own allocations peaked at 912 MiB (956,301,312 B); a 1 MiB
  // __device__ array; the explicit pool's cudaMemPoolAttrReservedMemHigh was 256 MiB and both
  // pools were back to 0 at the end.
  constexpr int64_t kProgramPeak = 956'301'312, kStatic = 1 << 20, kPoolHigh = 256 << 20;
  EXPECT_EQ(LibraryBytes(r, "libcudart"), kProgramPeak);  // the program's runtime calls
  EXPECT_EQ(LibraryBytes(r, "memory_app"), kStatic);      // its static memory
  const int64_t nccl = LibraryBytes(r, "libnccl");
  EXPECT_GT(nccl, 0);
  EXPECT_EQ(r.peak_bytes, kProgramPeak + kStatic + nccl);
  // nsys saw the same allocations and the same peak.
  EXPECT_EQ(n.peak_bytes, r.peak_bytes);
  EXPECT_EQ(n.allocations, r.allocations);
  EXPECT_EQ(n.frees, r.frees);
  // Pools: the default pool (4 x 64 MiB) and the explicit one (8 x 32 MiB) each reached 256 MiB,
  // and ended at 0; a pool that was created and never used holds nothing.
  for (const DeviceMemory* d : {&r, &n}) {
    ASSERT_EQ(d->pools.size(), 3u);
    int used = 0;
    for (const MemoryPool& p : d->pools) {
      EXPECT_EQ(p.end_size_bytes, 0);
      if (p.allocations == 0) {
        EXPECT_EQ(p.max_size_bytes, 0);
        continue;
      }
      ++used;
      EXPECT_EQ(p.max_size_bytes, kPoolHigh);
      EXPECT_EQ(p.max_used_bytes, kPoolHigh);
      EXPECT_TRUE(p.allocations == 4 || p.allocations == 8);
    }
    EXPECT_EQ(used, 2);
    // Reserved: the peak is reached with every pool fully used.
    EXPECT_EQ(d->reserved_at_peak_bytes, d->peak_bytes);
  }
  EXPECT_TRUE(n.by_source.empty());  // nsys exports carry no allocating library
}

}  // namespace
}  // namespace sightline
