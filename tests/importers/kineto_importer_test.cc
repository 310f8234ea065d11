// Tests of the Kineto (PyTorch profiler) JSON importer (src/importers/kineto): the mapping of a
// known trace, and the layouts and odd values real traces have. Bad inputs, the building blocks and
// the real traces: kineto_bad_input_test.cc.
#include "importers/kineto/kineto_importer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "importers/kineto/kineto_events_reader.h"
#include "importers/kineto/kineto_names.h"
#include "importers/kineto/kineto_numbers.h"
#include "importers/kineto/kineto_parser.h"
#include "kineto_test_traces.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

using namespace kineto_test;  // NOLINT(build/namespaces)

// ---------------------------------------------------------------- mapping of a known trace

TEST(KinetoImporter, MapsEveryCategoryOfBasicTrace) {
  const Trace t = MustImport(DataPath("basic.json"));
  EXPECT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.memops.size(), 4u);
  EXPECT_EQ(t.api_calls.size(), 5u);
  EXPECT_EQ(t.ranges.size(), 4u);  // ProfilerStep#7, forward, aten::linear, aten::addmm

  // Dropped by design, counted per category (info).
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedGpuUserAnnotation), 1);
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedAc2g), 2);
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedTrace), 1);
  // The [memory] instant event is now a memory event (4 KiB on GPU 0, with the allocator's totals).
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedCpuInstantEvent), 0);
  ASSERT_EQ(t.memory_events.size(), 1u);
  EXPECT_EQ(t.memory_events.bytes[0], 4096);
  EXPECT_EQ(t.memory_events.total_reserved[0], 2629828608);
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedOverhead), 1);
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedNoCategory),
            2);                                               // Iteration Start, Record Window End
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedMetadata), 2);  // two process_sort_index
  // Unusable events: no dur, a string ts, an array element that is not an object.
  EXPECT_EQ(Count(t, DiagCode::kKinetoInvalidEvent), 3);
  EXPECT_EQ(Count(t, DiagCode::kNegativeDuration), 1);
  // Kernel 101 has 2048 B of shared memory, which Kineto reports as static + dynamic.
  EXPECT_EQ(Count(t, DiagCode::kKinetoSmemSplitUnknown), 1);
  EXPECT_EQ(Count(t, DiagCode::kKernelWithoutLaunch), 1);  // correlation 999
  EXPECT_EQ(Count(t, DiagCode::kMemopWithoutLaunch), 1);   // correlation 105

  EXPECT_EQ(t.source.format, "kineto-json");
  EXPECT_EQ(t.source.format_version, "1");
  EXPECT_EQ(t.source.producer, "PyTorch Profiler (CUDA runtime 12.4, driver 12.9, CUPTI API 22)");
  EXPECT_EQ(t.source.rank, 3);
  EXPECT_EQ(t.source.world_size, 8);
  ASSERT_EQ(t.devices.size(), 2u);
  const DeviceInfo& d = t.devices[1];
  EXPECT_EQ(d.id, 1);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.total_memory_bytes, 85018279936);
  EXPECT_EQ(d.max_threads_per_sm, 2048);
  EXPECT_EQ(d.registers_per_sm, 65536);
  EXPECT_EQ(d.shared_memory_per_sm_bytes, 233472);
  EXPECT_EQ(d.shared_memory_per_block_optin_bytes, 232448);
}

TEST(KinetoImporter, ConvertsMicrosecondsToExactNanoseconds) {
  const Trace t = MustImport(DataPath("basic.json"));
  // "ts": 1365627865398.728, "dur": 10.001 after baseTimeNanoseconds 1767189312000000000; a
  // double holds only ~16 digits, these are 19.
  ASSERT_GE(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.start_ns[0], kBase + 1365627865398728);
  EXPECT_EQ(t.kernels.end_ns[0], kBase + 1365627865398728 + 10001);
  // "ts": 1365627862757.064 (ProfilerStep#7, the first range).
  EXPECT_EQ(t.ranges.start_ns[0], kBase + 1365627862757064);
  EXPECT_EQ(t.ranges.end_ns[0], kBase + 1365627862757064 + 1000000);
}

TEST(KinetoImporter, KernelsKeepLaunchArgsAndLinkToTheirLaunch) {
  const Trace t = MustImport(DataPath("basic.json"));
  const KernelTable& k = t.kernels;
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(t.str(k.name[0]), "void gemm_kernel<float, 128>(float*, float const*, int)");
  EXPECT_EQ(t.str(k.short_name[0]), "gemm_kernel");
  EXPECT_EQ(k.device[0], 0);
  EXPECT_EQ(k.stream[0], 7);
  EXPECT_EQ(k.correlation[0], 100);
  EXPECT_EQ(k.grid[0], (Dim3{132, 1, 1}));
  EXPECT_EQ(k.block[0], (Dim3{256, 1, 1}));
  EXPECT_EQ(k.registers_per_thread[0], 64);
  EXPECT_EQ(k.static_smem_bytes[0], 0);  // a total of 0 splits exactly
  EXPECT_EQ(k.dynamic_smem_bytes[0], 0);
  ASSERT_NE(k.launch_call[0], kNoRow);
  EXPECT_EQ(t.str(t.api_calls.name[k.launch_call[0]]), "cudaLaunchKernel");
  EXPECT_EQ(k.pid[0], 4242);  // filled from the launching call

  EXPECT_EQ(k.grid[1], (Dim3{4, 2, 1}));
  EXPECT_EQ(k.static_smem_bytes[1], -1);  // 2048 = static + dynamic: split unknown
  EXPECT_EQ(k.dynamic_smem_bytes[1], -1);
  ASSERT_NE(k.launch_call[1], kNoRow);
  EXPECT_EQ(t.api_calls.kind[k.launch_call[1]], ApiKind::kDriver);

  EXPECT_EQ(k.device[2], 1);
  EXPECT_EQ(k.stream[2], 13);
  EXPECT_EQ(k.launch_call[2], kNoRow);
  EXPECT_EQ(k.pid[2], -1);
  EXPECT_EQ(k.static_smem_bytes[2], -1);  // no "shared memory" arg
}

TEST(KinetoImporter, MemoryOperationsTakeKindsFromTheirNames) {
  const Trace t = MustImport(DataPath("basic.json"));
  const MemOpTable& m = t.memops;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m.kind[0], MemOpKind::kHtoD);
  EXPECT_EQ(m.src_kind[0], MemoryKind::kPinned);
  EXPECT_EQ(m.dst_kind[0], MemoryKind::kDevice);
  EXPECT_EQ(m.size_bytes[0], 2048);
  EXPECT_NE(m.launch_call[0], kNoRow);
  EXPECT_EQ(m.kind[1], MemOpKind::kMemset);
  EXPECT_EQ(m.dst_kind[1], MemoryKind::kDevice);
  EXPECT_EQ(m.size_bytes[1], 16);
  EXPECT_EQ(m.kind[2], MemOpKind::kDtoH);
  EXPECT_EQ(m.dst_kind[2], MemoryKind::kPageable);
  EXPECT_EQ(m.kind[3], MemOpKind::kPtoP);
  EXPECT_EQ(m.device[3], 1);
  EXPECT_EQ(m.size_bytes[3], 1048576);
  EXPECT_EQ(m.launch_call[3], kNoRow);
}

TEST(KinetoImporter, HostEventsBecomeApiCallsAndRanges) {
  const Trace t = MustImport(DataPath("basic.json"));
  const ApiCallTable& a = t.api_calls;
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(t.str(a.name[0]), "cudaLaunchKernel");
  EXPECT_EQ(a.kind[0], ApiKind::kRuntime);
  EXPECT_EQ(a.api_class[0], ApiClass::kLaunch);
  EXPECT_EQ(a.pid[0], 4242);
  EXPECT_EQ(a.tid[0], 4242);
  EXPECT_EQ(a.correlation[0], 100);
  EXPECT_EQ(t.str(a.name[1]), "cuLaunchKernel");
  EXPECT_EQ(a.kind[1], ApiKind::kDriver);

  const RangeTable& r = t.ranges;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.str(r.name[0]), "ProfilerStep#7");
  EXPECT_EQ(r.kind[0], RangeKind::kUserAnnotation);
  EXPECT_EQ(r.kind[1], RangeKind::kPythonFunction);
  EXPECT_EQ(t.str(r.name[2]), "aten::linear");
  EXPECT_EQ(r.kind[2], RangeKind::kCpuOp);
  EXPECT_EQ(r.depth[3], 3);  // step > python frame > aten::linear > aten::addmm
  EXPECT_EQ(r.parent[3], 2);
}

TEST(KinetoImporter, MetadataNamesHostProcessesNotGpuRows) {
  const Trace t = MustImport(DataPath("basic.json"));
  ASSERT_EQ(t.processes.size(), 1u);  // pid 0 is "GPU 0": a device, not a process
  EXPECT_EQ(t.processes[0].pid, 4242);
  EXPECT_EQ(t.processes[0].name, "python3");
  ASSERT_EQ(t.threads.size(), 1u);  // "stream 7 " on the GPU row is a stream
  EXPECT_EQ(t.threads[0].tid, 4242);
  EXPECT_EQ(t.threads[0].name, "thread 4242 (python3)");
}

TEST(KinetoImporter, KeyOrderGzipAndWindowSizeDoNotChangeTheResult) {
  const std::string expected = Dump(MustImport(DataPath("basic.json")));
  // Sorted keys put args before cat and ph (python3 json.dumps(sort_keys=True) of basic.json).
  EXPECT_EQ(Dump(MustImport(DataPath("basic_sorted_keys.json"))), expected);
  EXPECT_EQ(Dump(MustImport(DataPath("basic.json.gz"))), expected);
  // Plain files read() in pieces (the default) and memory-mapped.
  for (bool mapped : {false, true}) {
    if (mapped) setenv(kineto::kMapEnv, "1", 1);
    for (size_t window : {16, 100, 257, 1000, 4096}) {
      for (const char* file : {"basic.json", "basic_sorted_keys.json", "basic.json.gz"}) {
        StatusOr<Trace> t = kineto::ImportKinetoJsonWithWindow(DataPath(file), window);
        ASSERT_TRUE(t.ok()) << file << " window " << window << ": " << t.status().message();
        EXPECT_EQ(Dump(*t), expected) << file << " window " << window << " mapped " << mapped;
      }
    }
    unsetenv(kineto::kMapEnv);
  }
}

TEST(KinetoImporter, ImportTraceRecognisesPlainAndGzip) {
  for (const char* file : {"basic.json", "basic.json.gz", "basic_sorted_keys.json"}) {
    StatusOr<Trace> t = ImportTrace(DataPath(file));
    ASSERT_TRUE(t.ok()) << file << ": " << t.status().message();
    EXPECT_EQ(t->kernels.size(), 3u);
  }
}

// ---------------------------------------------------------------- layouts and odd values

TEST_F(KinetoTest, BaseTimeAfterTraceEventsIsApplied) {
  // Older Kineto versions write baseTimeNanoseconds after traceEvents.
  const Trace t = MustImport(
      Write("after.json", TraceJson(kKernelEvent, "", R"("baseTimeNanoseconds": 5000000000)")));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.start_ns[0], 5000000000 + 1000500);
}

TEST_F(KinetoTest, RecordParamCommsKeepsProcessGroupAndSequenceNumber) {
  // PyTorch's NCCL record: the range stays a cpu_op range and also becomes a collective; one
  // without "Seq" (older PyTorch) only a range; args before the name are read too.
  const std::string events =
      std::string(kKernelEvent) +
      R"(, {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 6,
           "ts": 990, "dur": 20, "args": {"Collective name": "allreduce", "Seq": 17,
           "Process Group Name": "3", "Process Group Ranks": "[0, 1]"}},
         {"ph": "X", "cat": "cpu_op", "args": {"Seq": 18, "Process Group Name": "3"},
           "name": "record_param_comms", "pid": 5, "tid": 6, "ts": 1020, "dur": 5},
         {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 6,
           "ts": 1030, "dur": 5, "args": {"Process Group Name": "3"}},
         {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 5, "tid": 6,
           "ts": 1040, "dur": 5, "args": {"Seq": 1, "Process Group Name": "3"}})";
  const Trace t = MustImport(Write("comms.json", TraceJson(events)));
  EXPECT_EQ(t.ranges.size(), 4u);
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives.seq[0], 17);
  EXPECT_EQ(t.str(t.collectives.communicator[0]), "3");
  EXPECT_EQ(t.str(t.collectives.name[0]), "allreduce");
  EXPECT_EQ(t.collectives.start_ns[0], 990'000);
  EXPECT_EQ(t.collectives.end_ns[0], 1'010'000);
  EXPECT_EQ(t.collectives.pid[0], 5);
  EXPECT_EQ(t.collectives.seq[1], 18);
  EXPECT_EQ(t.str(t.collectives.name[1]), "");
}

TEST_F(KinetoTest, WrongBaseTimeGuessFromTheTailIsCorrected) {
  // The last "baseTimeNanoseconds" in the file is nested, not the top-level one.
  const Trace t = MustImport(
      Write("nested.json",
            TraceJson(kKernelEvent, "",
                      R"("baseTimeNanoseconds": 7000, "metadata": {"baseTimeNanoseconds": 9})")));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.start_ns[0], 7000 + 1000500);
  const Trace u =
      MustImport(Write("nested_only.json",
                       TraceJson(kKernelEvent, "", R"("metadata": {"baseTimeNanoseconds": 9})")));
  ASSERT_EQ(u.kernels.size(), 1u);
  EXPECT_EQ(u.kernels.start_ns[0], 1000500);
}

TEST_F(KinetoTest, OldLayoutWithIntegerEpochMicroseconds) {
  // HTA-era traces: no baseTimeNanoseconds, "ts" in whole epoch microseconds, "dur" like 10.0.
  const Trace t = MustImport(Write(
      "old.json",
      TraceJson(
          R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 23, "ts": 1682725898082228,
          "dur": 10.0, "args": {"device": 0, "stream": 23, "correlation": 6935929}},
         {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4037, "tid": 4037,
          "ts": 1682725898082212, "dur": 18.0, "args": {"correlation": 6935929}})",
          R"("schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 128})")));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.start_ns[0], 1682725898082228000);
  EXPECT_EQ(t.kernels.end_ns[0], 1682725898082238000);
  EXPECT_EQ(t.kernels.launch_call[0], 0);
  EXPECT_EQ(t.kernels.pid[0], 4037);
  EXPECT_EQ(t.source.rank, 1);
  EXPECT_EQ(t.source.world_size, 128);
}

TEST_F(KinetoTest, StringIdsBomAndNumbersAsStrings) {
  const Trace t = MustImport(Write(
      "strings.json",
      "\xEF\xBB\xBF  \n" +
          TraceJson(
              R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": "4242", "tid": "4243", "ts": 1, "dur": 1},
         {"ph": "X", "cat": "python_function", "name": "b", "pid": 4242, "tid": "worker", "ts": 1,
          "dur": 1},
         {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
          "ts": 1, "dur": 1, "args": {"correlation": "77"}},
         {"ph": "X", "cat": "kernel", "name": "k\"quoted\" \u00e9", "pid": 0, "tid": 7, "ts": 2,
          "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 77, "grid": [1, 2],
          "block": [32, 1, 1.0]}})")));
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges.pid[0], 4242);
  EXPECT_EQ(t.ranges.tid[0], 4243);
  EXPECT_LT(t.ranges.tid[1], -1);  // a synthetic id for the named thread
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].name, "worker");
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.str(t.kernels.name[0]), "k\"quoted\" \xC3\xA9");
  EXPECT_EQ(t.kernels.launch_call[0], 0);
  EXPECT_EQ(t.kernels.grid[0], Dim3{});  // two values: not a grid
  EXPECT_EQ(t.kernels.block[0], (Dim3{32, 1, 1}));
}

TEST_F(KinetoTest, GpuEventsWithoutArgsFallBackToPidAndTid) {
  const Trace t = MustImport(
      Write("noargs.json",
            TraceJson(
                R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 2, "tid": 9, "ts": 1, "dur": 1},
         {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 2, "tid": 9, "ts": 3,
          "dur": 1},
         {"ph": "i", "cat": "kernel", "name": "odd", "pid": 2, "tid": 9, "ts": 5})")));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.device[0], 2);
  EXPECT_EQ(t.kernels.stream[0], 9);
  EXPECT_EQ(t.kernels.correlation[0], -1);
  ASSERT_EQ(t.memops.size(), 1u);
  EXPECT_EQ(t.memops.kind[0], MemOpKind::kHtoD);  // no "(src -> dst)" part: memory kinds unknown
  EXPECT_EQ(t.memops.src_kind[0], MemoryKind::kUnknown);
  EXPECT_EQ(Count(t, DiagCode::kKinetoGpuArgsMissing), 3);  // 2 x device/stream, 1 x bytes
  EXPECT_EQ(Count(t, DiagCode::kKinetoMemopNameUnknown), 1);
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedPhase), 1);
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.id == DiagCode::kKinetoUnmappedPhase) {
      EXPECT_EQ(d.detail, "category 'kernel', phase 'i'");
    }
  }
}

TEST_F(KinetoTest, UnknownCategoriesAreCountedOnePerCategory) {
  const Trace t = MustImport(Write(
      "unknown_cat.json",
      TraceJson(R"({"ph": "X", "cat": "weird", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
         {"ph": "X", "cat": "weird", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1},
         {"ph": "X", "cat": "odd one", "name": "c", "pid": 1, "tid": 1, "ts": 3, "dur": 1})")));
  EXPECT_EQ(Count(t, DiagCode::kKinetoUnmappedCategory), 3);
  std::map<std::string, int64_t> by_detail;
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.id == DiagCode::kKinetoUnmappedCategory) by_detail[d.detail] = d.count;
  }
  const std::map<std::string, int64_t> expected = {{"category 'odd one'", 1},
                                                   {"category 'weird'", 2}};
  EXPECT_EQ(by_detail, expected);
}

// docs/reliability.md: events with fields of the wrong type are dropped and counted; when nothing
// usable is left, ImportTrace (what `sightline analyze` runs) is an error that lists the drops.
TEST_F(KinetoTest, NothingUsableLeftIsAnErrorListingTheDrops) {
  const std::string bad =
      Write("all_bad.json",
            TraceJson(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "abc",
                    "dur": 2, "args": {"device": 0, "stream": 7}},
                   {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5,
                    "dur": null, "args": {"device": 0, "stream": 7}})"));
  EXPECT_EQ(Count(MustImport(bad), DiagCode::kKinetoInvalidEvent), 2);
  StatusOr<Trace> t = ImportTrace(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(t.status().message().find("nothing usable is left"), std::string::npos);
  EXPECT_NE(t.status().message().find("2 kineto_invalid_event"), std::string::npos)
      << t.status().message();
  // One usable event beside them: a trace, the drops counted.
  StatusOr<Trace> one = ImportTrace(
      Write("one_good.json", TraceJson(std::string(kKernelEvent) +
                                       R"(, {"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
                                       "tid": 7, "ts": "abc", "dur": 2})")));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->kernels.size(), 1u);
  EXPECT_EQ(Count(*one, DiagCode::kKinetoInvalidEvent), 1);
  // An empty capture drops nothing: still a trace.
  EXPECT_TRUE(ImportTrace(Write("empty_events.json", TraceJson(""))).ok());
}

TEST_F(KinetoTest, EventsWhoseStringsLookLikeWindowBoundaries) {
  // Names full of '}', '},{', quotes and escapes, so that windows get cut inside strings.
  std::string events;
  const std::vector<std::string> names = {"a}", "},{", "\\\"}\\\"", "x\\\\", "}}}}},", "\\u007d"};
  for (int i = 0; i < 300; ++i) {
    if (i) events += ",\n";
    events += R"({"ph": "X", "cat": "cpu_op", "name": ")" + names[i % names.size()] +
              R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(i * 10) +
              R"(, "dur": 5, "args": {"Input type": ["}", "{", "]"], "x": {"y": "}"}}})";
  }
  const std::string path =
      Write("weird.json", TraceJson(events, R"("schemaVersion": 1)", R"("traceName": "}]}")"));
  const std::string expected = Dump(MustImport(path));
  EXPECT_NE(expected.find("R 2990000 2995000 1 1 } cpu_op"), std::string::npos);  // "\u007d"
  for (size_t window : {16, 50, 97, 128, 333, 1024, 5000}) {
    StatusOr<Trace> t = kineto::ImportKinetoJsonWithWindow(path, window);
    ASSERT_TRUE(t.ok()) << window << ": " << t.status().message();
    EXPECT_EQ(t->ranges.size(), 300u);
    EXPECT_EQ(Dump(*t), expected) << "window " << window;
  }
}

}  // namespace
}  // namespace sightline
