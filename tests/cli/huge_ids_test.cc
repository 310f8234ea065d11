// Device ids are input, any int32: a device id near INT32_MAX (or a negative one) must not size a
// table (issue 34: the per-device busy unions were sized by the largest id and the program aborted
// on `2147483647`). Every analysis runs on such traces, built in memory, read from a recorder file,
// from an nsys export and, end to end, from a Kineto trace through the CLI, with the per-device
// figures of normal ids.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <climits>
#include <filesystem>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/idle_gaps/idle_gaps.h"
#include "analyses/memory/memory.h"
#include "analyses/overview/overview.h"
#include "importers/importer.h"
#include "importers/recorder/recorder_importer.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;
using testing::Where;

constexpr int32_t kMax = INT32_MAX;
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)";
constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

// Work on devices 0, INT32_MAX and -5 (no device): a GEMM on 0; on INT32_MAX a GEMM, an
// all-reduce that overlaps it by 100 ns, a copy, GPU metric samples and memory events; a GEMM on
// -5. Busy: device 0 [0, 100); device INT32_MAX [1000, 1500) + [2000, 2100) = 600 ns.
Trace HugeDeviceIds() {
  TraceFixture f;
  f.Device(0).Device(kMax);
  f.Range("step_0", 0, 4'000);
  f.Launch(kGemm, 0, 5, 0, 100, Where{0, 7});
  f.Launch(kGemm, 900, 950, 1'000, 1'200, Where{kMax, 7});
  f.Launch(kAllReduce, 960, 990, 1'100, 1'500, Where{kMax, 9});
  f.Memcpy(MemOpKind::kHtoD, 2'000, 2'100, 4'096, Where{kMax, 7});
  f.Launch(kGemm, 2'900, 2'950, 3'000, 3'300, Where{-5, 7});
  const StringId gr = f.Intern("GR Active [Throughput %]");
  for (TimeNs t = 0; t < 4'000; t += 500) f.builder().AddCounter(t, kMax, gr, 50.0);
  TraceBuilder::MemoryEventRow alloc;
  alloc.time_ns = 1'000;
  alloc.device = kMax;
  alloc.pid = alloc.tid = 100;
  alloc.bytes = 1 << 20;
  alloc.address = 0x7000'0000;
  alloc.kind = MemoryKind::kDevice;
  f.builder().AddMemoryEvent(alloc);
  TraceBuilder::MemoryEventRow free = alloc;
  free.time_ns = 3'500;
  free.bytes = -(1 << 20);
  f.builder().AddMemoryEvent(free);
  return f.Build();
}

TEST(HugeIds, ContextMapsDeviceIdsToSlots) {
  const Trace t = HugeDeviceIds();
  AnalysisContext c(t);
  EXPECT_EQ(c.gpu().GpuDevices(), (std::vector<int32_t>{0, kMax}));
  EXPECT_EQ(c.gpu().Busy(0), (std::vector<Interval>{{0, 100}}));
  EXPECT_EQ(c.gpu().Busy(kMax), (std::vector<Interval>{{1'000, 1'500}, {2'000, 2'100}}));
  EXPECT_TRUE(c.gpu().Busy(-5).empty());  // work on no device counts on none
  EXPECT_TRUE(c.gpu().Busy(1).empty());
  EXPECT_TRUE(c.gpu().Busy(kMax - 1).empty());
  EXPECT_EQ(c.gpu().TotalKernelTimeNs(), 100 + 200 + 400 + 300);
  const CommSplit& comm = c.kernels().Comm(kMax);
  EXPECT_EQ(comm.comm_kernels, 1);
  EXPECT_EQ(comm.comm_ns, 400);
  EXPECT_EQ(comm.compute_ns, 200);
  EXPECT_EQ(comm.overlap_ns, 100);
  EXPECT_EQ(c.kernels().Comm(0).compute_ns, 100);
  EXPECT_EQ(c.kernels().Comm(-5).compute_ns, 0);
  EXPECT_TRUE(c.kernels().HasCommunication());
}

TEST(HugeIds, EveryAnalysisRunsWithPerDeviceFigures) {
  const Trace t = HugeDeviceIds();
  for (int threads : {1, 4}) {
    AnalysisContext c(t);
    Report report;
    const Status s = AnalyzeTrace(c, "t", report, threads);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(report.sections.empty());
  }

  StatusOr<OverviewResult> o = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  auto usage = [&](int32_t device) -> const DeviceUsage* {
    for (const DeviceUsage& d : o->devices) {
      if (d.device == device) return &d;
    }
    return nullptr;
  };
  ASSERT_NE(usage(0), nullptr);
  EXPECT_EQ(usage(0)->busy_ns, 100);
  ASSERT_NE(usage(kMax), nullptr);
  EXPECT_EQ(usage(kMax)->kernels, 2);
  EXPECT_EQ(usage(kMax)->memops, 1);
  EXPECT_EQ(usage(kMax)->busy_ns, 600);
  EXPECT_EQ(usage(kMax)->active_span_ns, 1'100);
  ASSERT_NE(usage(-5), nullptr);
  EXPECT_EQ(usage(-5)->kernels, 1);

  StatusOr<IdleGapsResult> gaps = ComputeIdleGaps(*Ctx(t), {.min_gap_ns = 100});
  ASSERT_TRUE(gaps.ok()) << gaps.status().ToString();
  ASSERT_EQ(gaps->devices.size(), 2u);
  EXPECT_EQ(gaps->devices[0].device, 0);
  EXPECT_EQ(gaps->devices[1].device, kMax);
  EXPECT_EQ(gaps->devices[1].busy_ns, 600);
  EXPECT_EQ(gaps->devices[1].idle_ns, 500);  // [1500, 2000)

  StatusOr<MemoryResult> memory = ComputeMemory(*Ctx(t), {});
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  ASSERT_EQ(memory->devices.size(), 1u);
  EXPECT_EQ(memory->devices[0].device, kMax);
  EXPECT_EQ(memory->devices[0].peak_bytes, 1 << 20);
}

// A recording's device ids are uint32: 0x7fffffff is INT32_MAX, 0xfffffffb reads as -5.
TEST(HugeIds, RecorderFile) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(2, "gemm");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  c.Add(recfmt::RecordType::kProcess, p);
  const uint32_t devices[] = {0x7fffffffu, 0u, 0xfffffffbu};
  for (uint32_t i = 0; i < 3; ++i) {
    recfmt::ApiBody a{};
    a.start_ns = 1'000 * (i + 1);
    a.end_ns = a.start_ns + 50;
    a.pid = 4242;
    a.tid = 7;
    a.correlation = 10 + i;
    a.domain = static_cast<uint32_t>(recfmt::ApiDomain::kRuntime);
    a.name_string = 1;
    c.Add(recfmt::RecordType::kApi, a);
    recfmt::KernelBody k{};
    k.start_ns = a.start_ns + 100;
    k.end_ns = k.start_ns + 300;
    k.device = devices[i];
    k.stream = 13;
    k.correlation = 10 + i;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = k.block_y = k.block_z = 32;
    k.name_string = 2;
    c.Add(recfmt::RecordType::kKernel, k);
  }
  c.Add(recfmt::RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "h.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  AnalysisContext context(*t);
  Report report;
  const Status s = AnalyzeTrace(context, "h", report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(context.gpu().GpuDevices(), (std::vector<int32_t>{0, kMax}));
  EXPECT_EQ(context.gpu().Busy(kMax), (std::vector<Interval>{{1'100, 1'400}}));
  EXPECT_EQ(context.gpu().Busy(0), (std::vector<Interval>{{2'100, 2'400}}));
}

// The shipped nsys export with its device 0 renamed INT32_MAX: the same figures under the new id.
TEST(HugeIds, NsysExport) {
  namespace fs = std::filesystem;
  const std::string original =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/decode_loop_graph_trace_h100.sqlite";
  const std::string renamed = testing::MakeTempDir() + "/huge_device.sqlite";
  fs::copy_file(original, renamed);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(renamed.c_str(), &db), SQLITE_OK);
  for (const char* table :
       {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}) {
    const std::string sql = std::string("UPDATE ") + table + " SET deviceId = 2147483647";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  ASSERT_EQ(sqlite3_exec(db, "UPDATE TARGET_INFO_GPU SET id = 2147483647, cuDevice = 2147483647",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  StatusOr<Trace> before = ImportTrace(original);
  StatusOr<Trace> after = ImportTrace(renamed);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  AnalysisContext b(*before), a(*after);
  Report report;
  const Status s = AnalyzeTrace(a, "renamed", report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(b.gpu().GpuDevices(), std::vector<int32_t>{0});
  EXPECT_EQ(a.gpu().GpuDevices(), std::vector<int32_t>{kMax});
  EXPECT_FALSE(a.gpu().Busy(kMax).empty());
  EXPECT_EQ(a.gpu().Busy(kMax), b.gpu().Busy(0));
  fs::remove_all(fs::path(renamed).parent_path());
}

// End to end: a Kineto trace with GPUs 0 and 2147483647, one file and two (the ranks analysis).
TEST(HugeIds, CliAnalyzesKinetoTrace) {
  const std::string file =
      "'" + std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/huge_device_id.json'";
  testing::CliResult r = testing::RunSightline("analyze --format json " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"gpus_used\": 2"), std::string::npos) << r.out;
  // The overview's row of the device (its first row in the report): 2 kernels, 1 copy, busy
  // [1010, 1040) + [1050, 1055) us of a span of 45 us.
  const size_t row = r.out.find("\"device\": 2147483647,");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string fields = r.out.substr(row, r.out.find('}', row) - row);
  for (const char* field :
       {"\"kernels\": 2,", "\"memops\": 1,", "\"active_span_ns\": 45000,", "\"busy_ns\": 35000,"}) {
    EXPECT_NE(fields.find(field), std::string::npos) << field << " in " << fields;
  }
  // Its all-reduce, 15 us with 5 us under the GEMM, is a finding on that device.
  EXPECT_NE(r.out.find("Communication not overlapped with compute on device 2147483647"),
            std::string::npos);
  testing::CliResult two = testing::RunSightline("analyze --format json " + file + " " + file);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("\"key\": \"ranks\""), std::string::npos);
}

}  // namespace
}  // namespace sightline
