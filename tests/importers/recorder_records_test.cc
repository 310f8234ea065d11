// Recorder file importer (src/importers/recorder): string ids, thread, GPU metric and memory
// records; a cut-off or damaged last chunk keeps the chunks before it; a bad header or version is a
// clear error; drop diagnostics reach the report; the real H100 recording; the GPU metrics' clock
// found against the kernels (gpu_metrics_align.h). The records: recorder_test_chunks.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "importers/importer.h"
#include "importers/recorder/gpu_metrics_align.h"
#include "importers/recorder/recorder_importer.h"
#include "recorder_test_chunks.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

using namespace recorder_test;  // NOLINT(build/namespaces)

TEST(RecorderImporter, HugeStringIdsAreMappedNotUsedAsSizes) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(0xb5000001u, "far_kernel");
  c.AddString(0xfffffffeu, "farthest_kernel");
  c.Add(RecordType::kApi, Api(1000, 1100, 21, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(1200, 1700, 21, 0xb5000001u, 0));
  c.Add(RecordType::kApi, Api(2000, 2100, 22, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2700, 22, 0xfffffffeu, 0));
  c.Add(RecordType::kApi, Api(3000, 3100, 23, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(3200, 3700, 23, 0xb5000002u, 0));  // never defined
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "s.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "far_kernel");
  EXPECT_EQ(t->str(t->kernels.name[1]), "farthest_kernel");
  EXPECT_EQ(t->str(t->kernels.name[2]), "<unnamed kernel>");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMissingStrings), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderReservedStringId), 0);
}

// String id 0xFFFFFFFF (id + 1 wrapped to 0 once, writing out of bounds) and 0 (the empty
// string) are ids the recorder never writes: a string record of either is counted
// (recorder_reserved_string_id), not taken, and what names it is unnamed; before, 0xFFFFFFFF was
// accepted without a word.
TEST(RecorderImporter, ReservedStringIdsAreCountedNotTaken) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(0xffffffffu, "farther_kernel");
  c.AddString(0, "not_empty");
  c.Add(RecordType::kApi, Api(2000, 2100, 22, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2700, 22, 0xffffffffu, 0));
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "s.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "<unnamed kernel>");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderReservedStringId), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMissingStrings), 1);
}

// Thread records name the threads of API calls and ranges; a thread without one keeps no name.
TEST(RecorderImporter, ThreadRecordsNameThreads) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(2, "python3");
  c.AddString(3, "responder");
  c.AddString(4, "respond");
  recfmt::ThreadBody main{};
  main.pid = 4242;
  main.tid = 4242;
  main.name_string = 2;
  c.Add(RecordType::kThread, main);
  recfmt::ApiBody api = Api(1000, 1100, 21, 1, recfmt::ApiDomain::kRuntime);
  api.tid = 4242;
  c.Add(RecordType::kApi, api);
  recfmt::ThreadBody responder{};
  responder.pid = 4242;
  responder.tid = 4250;
  responder.name_string = 3;
  c.Add(RecordType::kThread, responder);
  recfmt::RangeBody r{};
  r.start_ns = 900;
  r.end_ns = 3500;
  r.pid = 4242;
  r.tid = r.end_tid = 4250;
  r.name_string = 4;
  c.Add(RecordType::kRange, r);
  recfmt::RangeBody unnamed = r;
  unnamed.tid = unnamed.end_tid = 4251;
  c.Add(RecordType::kRange, unnamed);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "t.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto name_of = [&](int32_t tid) -> std::string {
    for (const ThreadInfo& x : t->threads) {
      if (x.pid == 4242 && x.tid == tid) return x.name;
    }
    return "<absent>";
  };
  EXPECT_EQ(name_of(4242), "python3");
  EXPECT_EQ(name_of(4250), "responder");
  EXPECT_NE(name_of(4251), "responder");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 0);
}

// GPU metrics (--gpu-metrics): a sample's values land in the counters under the metric records'
// names, its GPU-clock time moved onto the CUPTI clock of the other records; metrics the GPU
// could not sample, a device PM sampling refused and lost samples are diagnostics.
std::string MetricSample(int64_t start, uint32_t device, std::vector<double> values,
                         uint32_t count) {
  recfmt::GpuMetricSampleHeader h{};
  h.start_ns = start;
  h.end_ns = start + 100'000;
  h.device = device;
  h.count = count;
  std::string body(reinterpret_cast<const char*>(&h), sizeof h);
  body.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return body;
}

TEST(RecorderImporter, GpuMetricSamplesBecomeCounters) {
  constexpr int64_t kCupti = 5'000'000, kRealtime = 1'764'000'000'000'000'000;
  recfmt::ChunkBuilder c;
  c.AddString(1, "SMs Active [Throughput %]");
  c.AddString(2, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
  c.AddString(3, "DRAM Read Bandwidth [Throughput %]");
  c.AddString(4, "dram__read_throughput.avg.pct_of_peak_sustained_elapsed");
  c.AddString(5, "NVLink RX Responses User Data [Throughput %]");
  c.AddString(6, "not available on GH100: CUPTI_ERROR_UNKNOWN (999)");
  c.AddString(7, "cuptiPmSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  p.start_cupti_ns = kCupti;
  p.start_realtime_ns = kRealtime;
  c.Add(RecordType::kProcess, p);
  auto metric = [&](uint32_t index, uint32_t name, uint32_t cupti, uint32_t reason) {
    recfmt::GpuMetricBody m{};
    m.device = 0;
    m.index = index;
    m.name_string = name;
    m.cupti_string = cupti;
    m.reason_string = reason;
    c.Add(RecordType::kGpuMetric, m);
  };
  metric(0, 1, 2, 0);
  metric(1, 3, 4, 0);
  metric(recfmt::kNotSampled, 5, 0, 6);
  // GPU times: the host's real-time clock; 1 ms and 1.1 ms after the process record on it.
  const int64_t gpu0 = kRealtime + 1'000'000;
  for (int i = 0; i < 2; ++i) {
    const std::string b = MetricSample(gpu0 + i * 100'000, 0, {40.0 + i, 7.5}, 2);
    c.AddRaw(RecordType::kGpuMetricSample, b.data(), b.size());
  }
  const std::string too_many = MetricSample(gpu0 + 200'000, 0, {1, 2, 3}, 3);
  c.AddRaw(RecordType::kGpuMetricSample, too_many.data(), too_many.size());
  const std::string cut = MetricSample(gpu0 + 300'000, 0, {1}, 2);  // says 2 values, holds 1
  c.AddRaw(RecordType::kGpuMetricSample, cut.data(), cut.size());
  recfmt::GpuMetricsStatusBody ok{};
  ok.device = 0;
  ok.interval_ns = 100'000;
  ok.samples = 2;
  ok.overflows = 1;
  ok.failed_samples = 2;
  ok.metrics = 2;
  c.Add(RecordType::kGpuMetricsStatus, ok);
  recfmt::GpuMetricsStatusBody refused{};
  refused.device = 1;
  refused.error_string = 7;
  c.Add(RecordType::kGpuMetricsStatus, refused);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "m.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();

  const CounterTable& k = t->counters;
  ASSERT_EQ(k.size(), 4u);
  std::map<std::string, std::vector<std::pair<TimeNs, double>>> by_name;
  for (size_t i = 0; i < k.size(); ++i) {
    EXPECT_EQ(k.device[i], 0);
    by_name[std::string(t->str(k.name[i]))].push_back({k.time_ns[i], k.value[i]});
  }
  ASSERT_EQ(by_name.size(), 2u);
  const auto& sm = by_name["SMs Active [Throughput %]"];
  ASSERT_EQ(sm.size(), 2u);
  EXPECT_EQ(sm[0].first, kCupti + 1'000'000);
  EXPECT_EQ(sm[1].first, kCupti + 1'100'000);
  EXPECT_DOUBLE_EQ(sm[0].second, 40.0);
  EXPECT_DOUBLE_EQ(sm[1].second, 41.0);
  EXPECT_DOUBLE_EQ(by_name["DRAM Read Bandwidth [Throughput %]"][1].second, 7.5);

  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsNotSampled), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsFailed), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsLost), 3);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 2);
  bool named = false;
  for (const Diagnostic& d : t->diagnostics.items()) {
    if (d.id == DiagCode::kRecorderGpuMetricsFailed) {
      named = d.detail.find("INSUFFICIENT_PRIVILEGES") != std::string::npos;
    }
  }
  EXPECT_TRUE(named);
}

// --cuda-memory-usage: allocations and releases (sign from the operation), static symbols, the
// allocating library, pools with their size after each operation; pool records change only a
// pool's size; records with an unknown operation are malformed, not guessed.
TEST(RecorderImporter, MemoryRecordsBecomeMemoryEvents) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "g_static_table");
  c.AddString(2, "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  c.Add(RecordType::kProcess, p);
  auto mem = [&](int64_t t, uint32_t op, uint64_t address, uint64_t bytes, uint32_t kind) {
    recfmt::MemoryBody m{};
    m.time_ns = t;
    m.pid = 4242;
    m.device = 1;
    m.operation = op;
    m.address = address;
    m.bytes = bytes;
    m.memory_kind = kind;
    m.correlation = 77;
    return m;
  };
  recfmt::MemoryBody st = mem(100, 1, 0x10, 1 << 20, 6);  // static device memory
  st.name_string = 1;
  c.Add(RecordType::kMemory, st);
  recfmt::MemoryBody nccl = mem(200, 1, 0x20, 4 << 20, 3);
  nccl.source_string = 2;
  c.Add(RecordType::kMemory, nccl);
  recfmt::MemoryBody pooled = mem(300, 1, 0x30, 2 << 20, 3);
  pooled.pool_type = 1;
  pooled.pool_address = 0x9000;
  pooled.pool_size = 32 << 20;
  c.Add(RecordType::kMemory, pooled);
  c.Add(RecordType::kMemory, mem(400, 2, 0x20, 4 << 20, 3));
  c.Add(RecordType::kMemory, mem(450, 9, 0x20, 4 << 20, 3));  // no such operation
  recfmt::MemoryPoolBody trim{};
  trim.time_ns = 500;
  trim.pid = 4242;
  trim.device = 1;
  trim.address = 0x9000;
  trim.operation = 3;
  trim.pool_type = 1;
  trim.size = 2 << 20;
  c.Add(RecordType::kMemoryPool, trim);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "mem.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const MemoryEventTable& m = t->memory_events;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m.bytes[0], 1 << 20);
  EXPECT_EQ(t->str(m.name[0]), "g_static_table");
  EXPECT_EQ(m.kind[0], MemoryKind::kDevice);
  EXPECT_EQ(m.device[0], 1);
  EXPECT_EQ(m.pid[0], 4242);
  EXPECT_EQ(m.correlation[0], 77);
  EXPECT_EQ(t->str(m.source[1]), "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  EXPECT_EQ(m.pool[1], 0u);
  EXPECT_EQ(m.pool[2], 0x9000u);
  EXPECT_EQ(m.pool_size[2], 32 << 20);
  EXPECT_EQ(m.bytes[3], -(4 << 20));
  EXPECT_EQ(m.bytes[4], 0);  // the trim: a pool's new size only
  EXPECT_EQ(m.address[4], 0u);
  EXPECT_EQ(m.pool[4], 0x9000u);
  EXPECT_EQ(m.pool_size[4], 2 << 20);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 1);
}

TEST(RecorderImporter, TruncatedLastChunkKeepsEarlierChunks) {
  const std::string whole = WholeFile();
  const size_t second = recfmt::FileHeaderBytes().size() + FirstChunk().size();
  for (size_t cut : {second + 5, second + 40, whole.size() - 1}) {
    StatusOr<Trace> t = ImportRecorderBytes(std::string_view(whole).substr(0, cut), "cut.slrec");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->kernels.size(), 3u) << cut;
    EXPECT_EQ(t->ranges.size(), 0u) << cut;
    EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderTruncatedChunks), 1) << cut;
  }
}

TEST(RecorderImporter, DamagedChunkStopsReading) {
  std::string bytes = WholeFile();
  bytes[recfmt::FileHeaderBytes().size() + FirstChunk().size() + 40] ^= 0x5a;  // in chunk 2
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "bad.slrec");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->api_calls.size(), 3u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderTruncatedChunks), 1);
}

TEST(RecorderImporter, MissingEndRecordIsReported) {
  StatusOr<Trace> t = ImportRecorderBytes(
      recfmt::FileHeaderBytes() + FirstChunk() + SecondChunk(false), "noend.slrec");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderNotFinished), 1);
}

TEST(RecorderImporter, UnknownRecordTypesAndLongerBodiesAreSkipped) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "k");
  const char future[24] = {1, 2, 3};
  c.AddRaw(static_cast<RecordType>(999), future, sizeof future);
  // A kernel body from a newer writer with extra trailing fields.
  std::string longer(sizeof(recfmt::KernelBody) + 16, '\0');
  const recfmt::KernelBody k = Kernel(10, 20, 1, 1, 0);
  std::memcpy(longer.data(), &k, sizeof k);
  c.AddRaw(RecordType::kKernel, longer.data(), longer.size());
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "new.slrec");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.dur_ns(0), 10);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 1);
}

TEST(RecorderImporter, BadHeaderAndVersionAreClearErrors) {
  std::string bytes = WholeFile();
  bytes[8] = 99;  // version 99
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "v99.slrec");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(t.status().message().find("v99.slrec"), std::string::npos);
  EXPECT_NE(t.status().message().find("version 99"), std::string::npos);

  StatusOr<Trace> short_file = ImportRecorderBytes("SLRECORD\x01", "short.slrec");
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("short.slrec"), std::string::npos);
}

TEST(RecorderImporter, RegistrySniffsTheMagic) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/trace.bin";  // the name does not matter, the bytes do
  std::ofstream(path, std::ios::binary) << WholeFile();
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source.format, "sightline-recorder");
  EXPECT_EQ(t->kernels.size(), 3u);

  std::string corrupt = WholeFile();
  corrupt[0] = 'X';  // no longer the magic: no importer claims it
  std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupt;
  StatusOr<Trace> bad = ImportTrace(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a format Sightline reads"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(RecorderImporter, AnalyzeShowsDropDiagnostics) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/run.slrec";
  std::ofstream(path, std::ios::binary) << WholeFile();
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(Info(DiagCode::kRecorderDroppedRecords).code), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A real recording of cuda/recorder/tools/apps/recorder_test_app (200 iterations on an H100,
// recorded by run_on_gpu.sh): 5 kernels per iteration, 2 of them from a CUDA graph, every one
// linked to its call.
TEST(RecorderImporter, RealH100Recording) {
  StatusOr<Trace> t = ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) +
                                  "/tests/data/recorder/recorder_test_app_h100.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1000u);
  int graph_kernels = 0;
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    ASSERT_NE(t->kernels.launch_call[i], kNoRow) << i;
    const std::string_view call = t->str(t->api_calls.name[t->kernels.launch_call[i]]);
    if (call == "cudaGraphLaunch") ++graph_kernels;
  }
  EXPECT_EQ(graph_kernels, 400);
  EXPECT_EQ(t->memops.size(), 401u);  // a copy and a memset per iteration, one memset before
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t->devices[0].sm_count, 132);
  int iterations = 0;
  for (size_t i = 0; i < t->ranges.size(); ++i) {
    if (t->str(t->ranges.name[i]).starts_with("iteration ")) ++iterations;
  }
  EXPECT_EQ(iterations, 200);
  EXPECT_TRUE(t->diagnostics.items().empty() ||
              t->diagnostics.Count(DiagCode::kRecorderDroppedRecords) == 0);
  // Recorded before graph node records were written: its graph kernels have no capture.
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 400);
}

// The samples' clock against the kernels': GR Active made from known busy time, seen through a
// clock that is off by a known amount, gives that amount back; a GPU busy throughout gives no
// verdict; samples already in place stay where they are.
std::vector<MetricAlignSample> SamplesOf(const std::vector<std::pair<TimeNs, TimeNs>>& busy,
                                         DurationNs clock_error) {
  std::vector<MetricAlignSample> out;
  for (TimeNs t = 0; t < 50'000'000; t += 100'000) {
    DurationNs covered = 0;
    for (const auto& [s, e] : busy) {
      covered += std::max<DurationNs>(
          0, std::min(e, t + clock_error + 100'000) - std::max(s, t + clock_error));
    }
    out.push_back({t, t + 100'000, 100.0 * static_cast<double>(covered) / 100'000});
  }
  return out;
}

TEST(GpuMetricsAlign, FindsTheClockError) {
  std::vector<std::pair<TimeNs, TimeNs>> busy;
  for (TimeNs k = 0; k < 10; ++k)
    busy.push_back({k * 5'000'000 + 370'000, k * 5'000'000 + 2'913'000});
  const MetricAlignment a = AlignMetricSamples(busy, SamplesOf(busy, 731'000));
  ASSERT_TRUE(a.checked);
  EXPECT_NEAR(static_cast<double>(a.shift_ns), 731'000, 1'000);
  EXPECT_LT(a.error_after, 0.01 * a.error_before);

  const MetricAlignment same = AlignMetricSamples(busy, SamplesOf(busy, 0));
  ASSERT_TRUE(same.checked);
  EXPECT_EQ(same.shift_ns, 0);
  EXPECT_NEAR(static_cast<double>(same.best_ns), 0, 1'000);

  const std::vector<std::pair<TimeNs, TimeNs>> always = {{-1'000'000, 60'000'000}};
  EXPECT_FALSE(AlignMetricSamples(always, SamplesOf(always, 731'000)).checked);
}

}  // namespace
}  // namespace sightline
