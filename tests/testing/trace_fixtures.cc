#include "testing/trace_fixtures.h"

#include <algorithm>
#include <string>

namespace sightline::testing {

TraceFixture& TraceFixture::Kernel(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                                   Where where, int64_t correlation) {
  KernelRow row;
  row.start_ns = start_ns;
  row.end_ns = end_ns;
  row.device = where.device;
  row.stream = where.stream;
  row.name = builder_.Intern(name);
  row.correlation = correlation;
  builder_.AddKernel(row);
  return *this;
}

TraceFixture& TraceFixture::Api(std::string_view name, TimeNs start_ns, TimeNs end_ns, ApiKind kind,
                                HostThread thread, int64_t correlation) {
  ApiCallRow row;
  row.start_ns = start_ns;
  row.end_ns = end_ns;
  row.pid = thread.pid;
  row.tid = thread.tid;
  row.name = name;
  row.kind = kind;
  row.correlation = correlation;
  builder_.AddApiCall(row);
  return *this;
}

TraceFixture& TraceFixture::Launch(std::string_view kernel_name, TimeNs api_start_ns,
                                   TimeNs api_end_ns, TimeNs gpu_start_ns, TimeNs gpu_end_ns,
                                   Where where, HostThread thread) {
  const int64_t correlation = next_correlation_++;
  Api("cudaLaunchKernel", api_start_ns, api_end_ns, ApiKind::kRuntime, thread, correlation);
  KernelRow row;
  row.start_ns = gpu_start_ns;
  row.end_ns = gpu_end_ns;
  row.device = where.device;
  row.stream = where.stream;
  row.pid = thread.pid;
  row.name = builder_.Intern(kernel_name);
  row.correlation = correlation;
  builder_.AddKernel(row);
  return *this;
}

TraceFixture& TraceFixture::Memcpy(MemOpKind kind, TimeNs start_ns, TimeNs end_ns, int64_t bytes,
                                   Where where, MemoryKind src, MemoryKind dst) {
  MemOpRow row;
  row.start_ns = start_ns;
  row.end_ns = end_ns;
  row.device = where.device;
  row.stream = where.stream;
  row.kind = kind;
  row.src_kind = src;
  row.dst_kind = dst;
  row.size_bytes = bytes;
  builder_.AddMemOp(row);
  return *this;
}

TraceFixture& TraceFixture::Memset(TimeNs start_ns, TimeNs end_ns, int64_t bytes, Where where,
                                   MemoryKind dst) {
  return Memcpy(MemOpKind::kMemset, start_ns, end_ns, bytes, where, MemoryKind::kUnknown, dst);
}

TraceFixture& TraceFixture::Range(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                                  RangeKind kind, HostThread thread, std::string_view domain) {
  RangeRow row;
  row.start_ns = start_ns;
  row.end_ns = end_ns;
  row.pid = thread.pid;
  row.tid = thread.tid;
  row.name = builder_.Intern(name);
  row.domain = builder_.Intern(domain);
  row.kind = kind;
  builder_.AddRange(row);
  return *this;
}

TraceFixture& TraceFixture::Gil(GilState state, TimeNs start_ns, TimeNs end_ns, HostThread thread) {
  builder_.AddGil(GilRow{start_ns, end_ns, thread.pid, thread.tid, state});
  return *this;
}

TraceFixture& TraceFixture::Gc(TimeNs start_ns, TimeNs end_ns, HostThread thread,
                               std::string_view name) {
  return Range(name, start_ns, end_ns, RangeKind::kNvtxStartEnd, thread);
}

TraceFixture& TraceFixture::OsCall(std::string_view name, TimeNs start_ns, TimeNs end_ns,
                                   HostThread thread,
                                   std::initializer_list<std::string_view> chain) {
  std::vector<StringId> frames;
  for (std::string_view f : chain) frames.push_back(builder_.Intern(f));
  builder_.AddOsCall(start_ns, end_ns, thread.pid, thread.tid, builder_.Intern(name), frames);
  return *this;
}

TraceFixture& TraceFixture::OffCpu(TimeNs start_ns, TimeNs end_ns, HostThread thread) {
  builder_.AddOffCpu(start_ns, end_ns, thread.pid, thread.tid);
  return *this;
}

TraceFixture& TraceFixture::PySample(TimeNs time_ns, std::initializer_list<std::string_view> stack,
                                     HostThread thread) {
  std::vector<StringId> frames;
  for (std::string_view f : stack) frames.push_back(builder_.Intern(f));
  builder_.AddPySample(time_ns, thread.pid, thread.tid, frames);
  return *this;
}

TraceFixture& TraceFixture::Device(int32_t id, std::string_view name, int32_t sm_count,
                                   int32_t cc_major, int32_t cc_minor, int64_t total_memory_bytes) {
  DeviceInfo d;
  d.id = id;
  d.name = std::string(name);
  d.sm_count = sm_count;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.total_memory_bytes = total_memory_bytes;
  builder_.AddDevice(d);
  return *this;
}

TraceFixture& TraceFixture::Process(int32_t pid, std::string_view name) {
  builder_.AddProcess({pid, std::string(name)});
  return *this;
}

TraceFixture& TraceFixture::Thread(int32_t pid, int32_t tid, std::string_view name) {
  builder_.AddThread({pid, tid, std::string(name)});
  return *this;
}

void AddTwoBucketServingLoop(TraceFixture& f, int first_eager_step, TimeNs eager_start) {
  for (int c = 0; c < 2; ++c) {
    const TimeNs base = c * 1'000;
    f.Range(c == 0 ? "capture_bs1" : "capture_bs4", base, base + 900);
    f.Api("cudaStreamBeginCapture", base + 1, base + 5);
    f.Range("layer_0", base + 10, base + 100);
    f.Range("attention", base + 11, base + 50);
    f.Api("cudaLaunchKernel", base + 20, base + 25, ApiKind::kRuntime, {}, 500 + c * 10);
    f.Range("mlp", base + 55, base + 99);
    f.Api("cudaLaunchKernel", base + 60, base + 65, ApiKind::kRuntime, {}, 501 + c * 10);
    f.Api("cudaStreamEndCapture", base + 200, base + 205);
  }
  for (int step = 0; step < 4; ++step) {
    const TimeNs base = 10'000 + step * 1'000;
    f.Range("step_" + std::to_string(step), base, base + 500);
    f.Api("cudaGraphLaunch", base + 1, base + 5, ApiKind::kRuntime, {}, 900 + step);
    f.Kernel(WholeGraphName(step < 2 ? 1 : 2), base + 10, base + 210, {}, 900 + step);
  }
  for (int e = 0; e < 2; ++e) {
    const TimeNs base = eager_start + e * 1'000;
    const TimeNs scale = e == 0 ? 1 : 4;  // batch 1, batch 4
    f.Range("step_" + std::to_string(first_eager_step + e), base, base + 500);
    f.Range("layer_0", base + 10, base + 400);
    f.Range("attention", base + 11, base + 100);
    f.Launch("attn", base + 20, base + 25, base + 30, base + 30 + 10 * scale);
    f.Range("mlp", base + 110, base + 390);
    f.Launch("up", base + 120, base + 125, base + 200, base + 200 + 20 * scale);
  }
}

void RemoveCapturePoints(Trace& trace) {
  KernelTable& k = trace.kernels;
  std::fill(k.capture_node.begin(), k.capture_node.end(), 0);
  std::fill(k.capture_ns.begin(), k.capture_ns.end(), -1);
  std::fill(k.capture_pid.begin(), k.capture_pid.end(), -1);
  std::fill(k.capture_tid.begin(), k.capture_tid.end(), -1);
}

}  // namespace sightline::testing
