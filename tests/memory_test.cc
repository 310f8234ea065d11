// Tests for the GPU memory analysis (analyses/memory.h) and its nsys import
// (CUDA_GPU_MEMORY_USAGE_EVENTS): the peak of the trace's own allocations, what held it, headroom.
#include "analyses/memory.h"

#include <gtest/gtest.h>

#include "base/file_io.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"
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
