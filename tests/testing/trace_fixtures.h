// Test helpers for building small synthetic traces in one line per event. Wraps TraceBuilder with
// defaults (device 0, stream 7, pid 100, tid 100) so tests state only what they check.
//
//   Trace t = TraceFixture()
//                 .Device(0, "NVIDIA H100", 132)
//                 .Launch("gemm", /*api*/ 0, 5, /*gpu*/ 10, 30)
//                 .Kernel("norm", 40, 45)
//                 .Memcpy(MemOpKind::kHtoD, 50, 60, 1 << 20)
//                 .Range("step_0", 0, 100)
//                 .Build();
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "model/trace.h"
#include "model/trace_builder.h"

namespace sightline::testing {

struct Where {
  int32_t device = 0;
  int32_t stream = 7;
};

struct HostThread {
  int32_t pid = 100;
  int32_t tid = 100;
};

class TraceFixture {
 public:
  TraceFixture() = default;

  // A kernel named `name` (the full name; the builder derives the short name) over [start, end).
  TraceFixture& Kernel(std::string_view name, TimeNs start_ns, TimeNs end_ns, Where where = {},
                       int64_t correlation = -1);
  // A host API call (runtime by default) over [start, end).
  TraceFixture& Api(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                    ApiKind kind = ApiKind::kRuntime, HostThread thread = {},
                    int64_t correlation = -1);
  // A cudaLaunchKernel call over [api_start, api_end) and the kernel it launches over
  // [gpu_start, gpu_end), linked by a fresh correlation id.
  TraceFixture& Launch(std::string_view kernel_name, TimeNs api_start_ns, TimeNs api_end_ns,
                       TimeNs gpu_start_ns, TimeNs gpu_end_ns, Where where = {},
                       HostThread thread = {});
  // A memory copy of `bytes` over [start, end) (memset: use Memset).
  TraceFixture& Memcpy(MemOpKind kind, TimeNs start_ns, TimeNs end_ns, int64_t bytes,
                       Where where = {}, MemoryKind src = MemoryKind::kUnknown,
                       MemoryKind dst = MemoryKind::kUnknown);
  TraceFixture& Memset(TimeNs start_ns, TimeNs end_ns, int64_t bytes, Where where = {},
                       MemoryKind dst = MemoryKind::kDevice);
  // A host range (NVTX push/pop by default) over [start, end).
  TraceFixture& Range(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                      RangeKind kind = RangeKind::kNvtxPushPop, HostThread thread = {},
                      std::string_view domain = "");
  // The Python GIL held or waited for by `thread` over [start, end) (nsys -t python-gil).
  TraceFixture& Gil(GilState state, TimeNs start_ns, TimeNs end_ns, HostThread thread = {});
  // A garbage collection over [start, end): a start/end range named `name` (TensorRT-LLM's
  // TLLM_PROFILE_RECORD_GC writes "Python GC" in the default domain) on `thread`.
  TraceFixture& Gc(TimeNs start_ns, TimeNs end_ns, HostThread thread = {},
                   std::string_view name = "Python GC");
  // An OS runtime call `name` (nsys -t osrt) by `thread` over [start, end), with its call chain
  // ("symbol (module)", innermost first: the OS function itself) when given.
  TraceFixture& OsCall(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                       HostThread thread = {}, std::initializer_list<std::string_view> chain = {});
  // `thread` switched out by the scheduler over [start, end).
  TraceFixture& OffCpu(TimeNs start_ns, TimeNs end_ns, HostThread thread = {});
  // A Python sample of `thread` at `time` with its stack, innermost frame first.
  TraceFixture& PySample(TimeNs time_ns, std::initializer_list<std::string_view> stack,
                         HostThread thread = {});
  TraceFixture& Device(int32_t id, std::string_view name = "NVIDIA H100 80GB HBM3",
                       int32_t sm_count = 132, int32_t cc_major = 9, int32_t cc_minor = 0,
                       int64_t total_memory_bytes = int64_t{80} << 30);
  TraceFixture& Process(int32_t pid, std::string_view name = "");
  TraceFixture& Thread(int32_t pid, int32_t tid, std::string_view name = "");

  // For rows the shortcuts above do not cover.
  TraceBuilder& builder() { return builder_; }
  StringId Intern(std::string_view s) { return builder_.Intern(s); }

  // Finishes the trace; the fixture is empty afterwards.
  Trace Build() { return builder_.Finish(); }

 private:
  TraceBuilder builder_;
  int64_t next_correlation_ = 1'000'000;  // away from ids tests pass explicitly
};

// A serving loop of two batch-size buckets, for the whole-graph estimate by batch size: graphs
// captured in `capture_bs1` (graph 1, at 0) and `capture_bs4` (graph 2, at 1'000), each launching
// `attn` inside `layer_0 > attention` and `up` inside `layer_0 > mlp`; steps 0 and 1 replay graph
// 1 and steps 2 and 3 graph 2 as whole-graph rows (step_N at 10'000 + 1'000 N); then two eager
// steps with the same ranges, step_<first_eager_step> at `eager_start` at batch 1 (kernels of 10
// and 20 ns) and the next, 1'000 later, at batch 4 (40 and 80 ns): the larger batch runs longer.
void AddTwoBucketServingLoop(TraceFixture& f, int first_eager_step, TimeNs eager_start);

// Forgets where each graph kernel was captured (node, time, thread), as a trace whose capture
// happened before the recorded window, or a PyTorch profiler trace, would give.
void RemoveCapturePoints(Trace& trace);

}  // namespace sightline::testing
