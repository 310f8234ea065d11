#include "exporters/perfetto_json.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "base/json_writer.h"

namespace sightline {
namespace {

class EventWriter {
 public:
  explicit EventWriter(TimeNs origin) : origin_(origin) {
    out_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  }

  // Starts an event: {"ph":..,"pid":..,"tid":..,"ts":.. ; the caller adds fields and calls End.
  std::string& Begin(char ph, int64_t pid, int64_t tid, TimeNs ts) {
    if (!first_) out_ += ",\n";
    first_ = false;
    fmt::format_to(std::back_inserter(out_), "{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}", ph,
                   pid, tid, Micros(ts));
    return out_;
  }
  void Name(std::string_view name) {
    out_ += ",\"name\":";
    JsonWriter::AppendEscaped(out_, name);
  }
  void Field(std::string_view key, std::string_view value) {
    fmt::format_to(std::back_inserter(out_), ",\"{}\":", key);
    JsonWriter::AppendEscaped(out_, value);
  }
  void Dur(DurationNs d) {
    fmt::format_to(std::back_inserter(out_), ",\"dur\":{}",
                   Micros(origin_ + std::max<DurationNs>(d, 0)));
  }
  std::string& out() { return out_; }
  void End() { out_ += '}'; }

  void Metadata(const char* what, int64_t pid, int64_t tid, std::string_view name) {
    Begin('M', pid, tid, origin_);
    Name(what);
    out_ += ",\"args\":{\"name\":";
    JsonWriter::AppendEscaped(out_, name);
    out_ += "}}";
  }
  void SortIndex(int64_t pid, int64_t index) {
    Begin('M', pid, 0, origin_);
    fmt::format_to(std::back_inserter(out_),
                   ",\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{}}}}}", index);
  }

  std::string Take() {
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  // ns -> µs with 3 decimals, exact (no floating point).
  std::string Micros(TimeNs t) const {
    const int64_t rel = t - origin_;
    const int64_t a = rel < 0 ? -rel : rel;
    return fmt::format("{}{}.{:03d}", rel < 0 ? "-" : "", a / 1000, a % 1000);
  }

  TimeNs origin_;
  std::string out_;
  bool first_ = true;
};

}  // namespace

std::string ExportPerfettoJson(const Trace& trace, PerfettoExportCounts* counts) {
  PerfettoExportCounts c;
  EventWriter w(trace.begin_ns());

  // Names and order: GPUs first, then host processes; threads named where the trace knows them.
  std::set<int32_t> gpus;
  std::set<std::pair<int32_t, int32_t>> streams;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    gpus.insert(trace.kernels.device[i]);
    streams.insert({trace.kernels.device[i], trace.kernels.stream[i]});
  }
  for (size_t i = 0; i < trace.memops.size(); ++i) {
    gpus.insert(trace.memops.device[i]);
    streams.insert({trace.memops.device[i], trace.memops.stream[i]});
  }
  for (int32_t d : gpus) {
    const DeviceInfo* info = trace.FindDevice(d);
    w.Metadata("process_name", kGpuPidBase + d, 0,
               fmt::format("GPU {}{}", d,
                           info != nullptr && !info->name.empty() ? ": " + info->name : ""));
    w.SortIndex(kGpuPidBase + d, d);
  }
  for (const auto& [d, s] : streams) {
    w.Metadata("thread_name", kGpuPidBase + d, s, fmt::format("Stream {}", s));
  }
  for (const ProcessInfo& p : trace.processes) {
    if (!p.name.empty()) w.Metadata("process_name", p.pid, 0, p.name);
  }
  for (const ThreadInfo& t : trace.threads) {
    if (!t.name.empty()) w.Metadata("thread_name", t.pid, t.tid, t.name);
  }

  // Flow ids: one per linked GPU operation.
  int64_t next_flow = 1;
  auto flow = [&](int32_t call, int64_t gpu_pid, int64_t stream, TimeNs gpu_start) {
    if (call == kNoRow || call < 0 || static_cast<size_t>(call) >= trace.api_calls.size()) return;
    const int64_t id = next_flow++;
    std::string& o = w.Begin('s', trace.api_calls.pid[call], trace.api_calls.tid[call],
                             trace.api_calls.start_ns[call]);
    fmt::format_to(std::back_inserter(o), ",\"name\":\"launch\",\"cat\":\"launch\",\"id\":{}}}",
                   id);
    std::string& f = w.Begin('f', gpu_pid, stream, gpu_start);
    fmt::format_to(std::back_inserter(f),
                   ",\"name\":\"launch\",\"cat\":\"launch\",\"id\":{},\"bp\":\"e\"}}", id);
    ++c.flows;
  };

  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int64_t pid = kGpuPidBase + k.device[i];
    w.Begin('X', pid, k.stream[i], k.start_ns[i]);
    w.Name(trace.str(k.short_name[i]));
    w.Field("cat", "kernel");
    w.Dur(k.dur_ns(i));
    std::string& o = w.out();
    o += ",\"args\":{\"name\":";
    JsonWriter::AppendEscaped(o, trace.str(k.name[i]));
    fmt::format_to(std::back_inserter(o),
                   ",\"grid\":\"{},{},{}\",\"block\":\"{},{},{}\",\"correlation\":{}}}",
                   k.grid[i].x, k.grid[i].y, k.grid[i].z, k.block[i].x, k.block[i].y, k.block[i].z,
                   k.correlation[i]);
    w.End();
    ++c.kernels;
    flow(k.launch_call[i], pid, k.stream[i], k.start_ns[i]);
  }
  const MemOpTable& m = trace.memops;
  for (size_t i = 0; i < m.size(); ++i) {
    const int64_t pid = kGpuPidBase + m.device[i];
    const bool set = m.kind[i] == MemOpKind::kMemset;
    w.Begin('X', pid, m.stream[i], m.start_ns[i]);
    w.Name(set ? "memset" : fmt::format("memcpy {}", MemOpKindName(m.kind[i])));
    w.Field("cat", set ? "memset" : "memcpy");
    w.Dur(m.dur_ns(i));
    fmt::format_to(
        std::back_inserter(w.out()),
        ",\"args\":{{\"size_bytes\":{},\"src\":\"{}\",\"dst\":\"{}\",\"correlation\":{}}}",
        m.size_bytes[i], MemoryKindName(m.src_kind[i]), MemoryKindName(m.dst_kind[i]),
        m.correlation[i]);
    w.End();
    ++c.memops;
    flow(m.launch_call[i], pid, m.stream[i], m.start_ns[i]);
  }
  const ApiCallTable& a = trace.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    w.Begin('X', a.pid[i], a.tid[i], a.start_ns[i]);
    w.Name(trace.str(a.name[i]));
    w.Field("cat", a.kind[i] == ApiKind::kDriver ? "cuda_driver" : "cuda_runtime");
    w.Dur(a.dur_ns(i));
    fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"correlation\":{}}}",
                   a.correlation[i]);
    w.End();
    ++c.api_calls;
  }
  // Ranges: nested ones as slices on their thread; NVTX start/end ranges (which may overlap
  // without nesting, or end on another thread) as async slices.
  const RangeTable& r = trace.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string_view name = trace.str(r.name[i]);
    const char* cat = RangeKindName(r.kind[i]);
    if (r.kind[i] == RangeKind::kNvtxStartEnd) {
      w.Begin('b', r.pid[i], r.tid[i], r.start_ns[i]);
      w.Name(name);
      w.Field("cat", cat);
      fmt::format_to(std::back_inserter(w.out()), ",\"id\":{}}}", i);
      w.Begin('e', r.pid[i], r.tid[i], r.end_ns[i]);
      w.Name(name);
      w.Field("cat", cat);
      fmt::format_to(std::back_inserter(w.out()), ",\"id\":{}}}", i);
    } else {
      w.Begin('X', r.pid[i], r.tid[i], r.start_ns[i]);
      w.Name(name);
      w.Field("cat", cat);
      w.Dur(r.dur_ns(i));
      w.End();
    }
    ++c.ranges;
  }
  if (counts != nullptr) *counts = c;
  return w.Take();
}

}  // namespace sightline
