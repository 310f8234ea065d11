#include "exporters/perfetto_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "analyses/memory/memory.h"
#include "base/json_writer.h"
#include "base/time_units.h"
#include "exporters/perfetto_graph_ranges.h"
#include "facts/graph_kernel_paths.h"

namespace sightline {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

class EventWriter {
 public:
  EventWriter(TimeNs origin, const ChunkSink& sink) : origin_(origin), sink_(sink) {
    out_.reserve(kChunkBytes + 64 * 1024);
    out_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  }

  // Starts an event: {"ph":..,"pid":..,"tid":..,"ts":.. ; the caller adds fields and calls End.
  // Hands full chunks to the sink between events; after a sink error, writes go nowhere.
  std::string& Begin(char ph, int64_t pid, int64_t tid, TimeNs ts) {
    if (out_.size() >= kChunkBytes) Flush();
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
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
    Begin('M', pid, tid, origin_);
    fmt::format_to(std::back_inserter(out_),
                   ",\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}", index);
  }
  // ,"key":<exact µs>: a duration as microseconds with 3 decimals.
  void MicrosField(std::string_view key, DurationNs d) {
    fmt::format_to(std::back_inserter(out_), ",\"{}\":{}", key, Micros(origin_ + d));
  }

  Status Finish() {
    out_ += "\n]}\n";
    Flush();
    return status_;
  }

 private:
  void Flush() {
    if (status_.ok() && !out_.empty()) status_ = sink_(out_);
    out_.clear();
  }

 public:
 private:
  // ns -> µs with 3 decimals, exact (no floating point).
  std::string Micros(TimeNs t) const {
    const int64_t rel = t - origin_;
    const int64_t a = rel < 0 ? -rel : rel;
    return fmt::format("{}{}.{:03d}", rel < 0 ? "-" : "", a / 1000, a % 1000);
  }

  TimeNs origin_;
  const ChunkSink& sink_;
  Status status_ = Status::Ok();
  std::string out_;
  bool first_ = true;
};

// Iteration markers: each set's iterations as slices on a track of their process and, so that the
// boundaries line up with the kernels, on a track at the top of every GPU process.
void WriteIterations(const Trace& trace, const IterationsResult& result,
                     const std::set<int32_t>& gpus, EventWriter& w, PerfettoExportCounts& c) {
  for (size_t si = 0; si < result.sets.size(); ++si) {
    const IterationSet& set = result.sets[si];
    const int64_t tid = kIterationTidBase + static_cast<int64_t>(si);
    const std::string track = fmt::format("Iterations: {}", set.pattern);
    std::vector<int64_t> pids;
    if (set.pid >= 0) pids.push_back(set.pid);
    for (int32_t d : gpus) {
      if (set.devices.empty() ||
          std::find(set.devices.begin(), set.devices.end(), d) != set.devices.end()) {
        pids.push_back(kGpuPidBase + d);
      }
    }
    for (int64_t pid : pids) {
      w.Metadata("thread_name", pid, tid, track);
      w.ThreadSortIndex(pid, tid, -1000 + static_cast<int64_t>(si));
      for (const Iteration& it : set.iterations) {
        w.Begin('X', pid, tid, it.start_ns);
        w.Name(it.outlier ? fmt::format("{} (outlier)", trace.str(it.name)) : trace.str(it.name));
        w.Field("cat", "iteration");
        w.Dur(it.wall_ns());
        std::string& o = w.out();
        fmt::format_to(std::back_inserter(o),
                       ",\"args\":{{\"index\":{},\"outlier\":{},\"kernels\":{}", it.index,
                       it.outlier ? "true" : "false", it.launched.kernel_count);
        w.MicrosField("wall_us", it.wall_ns());
        w.MicrosField("gpu_busy_us", it.gpu_busy_in_window_ns);
        w.MicrosField("kernel_time_us", it.launched.kernel_time_ns);
        w.out() += '}';
        w.End();
      }
    }
    c.iterations += static_cast<int64_t>(set.iterations.size());
  }
}

// Host tracks from the analysis context: the GIL per thread (held / waited, as unions) and the
// garbage collections per process, each on a track of its own beside the process's threads.
void WriteHostTracks(const Trace& trace, AnalysisContext& context, EventWriter& w,
                     PerfettoExportCounts& c) {
  const std::vector<std::pair<int32_t, int32_t>>& threads = context.host().GilThreads();
  for (size_t k = 0; k < threads.size(); ++k) {
    const int32_t pid = threads[k].first, tid = threads[k].second;
    const int64_t track = kGilTidBase + static_cast<int64_t>(k);
    std::string name = fmt::format("GIL: thread {}", tid);
    for (const ThreadInfo& t : trace.threads) {
      if (t.pid == pid && t.tid == tid && !t.name.empty()) name += fmt::format(" ({})", t.name);
    }
    w.Metadata("thread_name", pid, track, name);
    auto slices = [&](const std::vector<Interval>& v, std::string_view what) {
      for (const Interval& iv : v) {
        w.Begin('X', pid, track, iv.start_ns);
        w.Name(what);
        w.Field("cat", "gil");
        w.Dur(iv.end_ns - iv.start_ns);
        w.End();
        ++c.gil_slices;
      }
    };
    slices(context.host().GilHeld(pid, tid), "Holding GIL");
    slices(context.host().GilWaited(pid, tid), "Waiting for GIL");
  }
  std::set<int32_t> pids;
  for (const ProcessInfo& p : trace.processes) pids.insert(p.pid);
  for (size_t i = 0; i < trace.ranges.size(); ++i) pids.insert(trace.ranges.pid[i]);
  for (int32_t pid : pids) {
    if (pid < 0) continue;
    const std::vector<Interval>& gc = context.host().GcIntervals(pid);
    if (gc.empty()) continue;
    w.Metadata("thread_name", pid, kGcTid, "Python GC");
    for (const Interval& iv : gc) {
      w.Begin('X', pid, kGcTid, iv.start_ns);
      w.Name("GC");
      w.Field("cat", "gc");
      w.Dur(iv.end_ns - iv.start_ns);
      w.End();
      ++c.gc_slices;
    }
  }
}

// Findings: a process at the top with one track per finding (in rank order) and a slice per span;
// a finding without spans gets one slice over the whole trace.
void WriteFindings(const Trace& trace, const std::vector<Finding>& findings, EventWriter& w,
                   PerfettoExportCounts& c) {
  if (findings.empty()) return;
  w.Metadata("process_name", kFindingsPid, 0, "Sightline findings");
  w.SortIndex(kFindingsPid, -1);
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    const int64_t tid = static_cast<int64_t>(i) + 1;
    w.Metadata("thread_name", kFindingsPid, tid,
               fmt::format("#{} [{}] {} (saves ~{})", tid, SeverityName(f.severity), f.id,
                           FormatDuration(f.estimated_savings_ns)));
    w.ThreadSortIndex(kFindingsPid, tid, tid);
    std::vector<FindingSpan> spans = f.spans;
    if (spans.empty()) spans.push_back({trace.begin_ns(), trace.end_ns(), -1});
    for (const FindingSpan& span : spans) {
      w.Begin('X', kFindingsPid, tid, span.start_ns);
      w.Name(f.title);
      w.Field("cat", "finding");
      w.Dur(span.end_ns - span.start_ns);
      std::string& o = w.out();
      fmt::format_to(std::back_inserter(o),
                     ",\"args\":{{\"rank\":{},\"id\":\"{}\",\"severity\":\"{}\",\"device\":{},"
                     "\"estimated_savings_ns\":{},\"where\":",
                     tid, f.id, SeverityName(f.severity), span.device, f.estimated_savings_ns);
      JsonWriter::AppendEscaped(o, f.where);
      o += ",\"recommendation\":";
      JsonWriter::AppendEscaped(o, f.recommendation);
      o += '}';
      w.End();
      ++c.finding_spans;
    }
    ++c.findings;
  }
}

// Counter tracks in each GPU's process: "GPU memory" (allocated, and reserved where the allocator
// says; the memory analysis's timeline) and one track per sampled metric.
Status WriteCounterTracks(const Trace& trace, AnalysisContext* context, EventWriter& w,
                          PerfettoExportCounts& c) {
  if (context != nullptr && trace.memory_events.size() > 0) {
    ASSIGN_OR_RETURN(const MemoryResult* memory, CachedMemory(*context));
    for (const DeviceMemory& d : memory->devices) {
      for (const MemoryPoint& p : d.timeline) {
        std::string& o = w.Begin('C', kGpuPidBase + d.device, 0, p.time_ns);
        fmt::format_to(std::back_inserter(o),
                       ",\"name\":\"GPU memory\",\"args\":{{\"allocated\":{}", p.allocated);
        if (p.reserved >= 0) fmt::format_to(std::back_inserter(o), ",\"reserved\":{}", p.reserved);
        o += "}}";
        ++c.memory_points;
      }
    }
  }
  const CounterTable& t = trace.counters;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t.value[i])) continue;  // not JSON
    w.Begin('C', kGpuPidBase + t.device[i], 0, t.time_ns[i]);
    w.Name(trace.str(t.name[i]));
    fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"value\":{}}}}}", t.value[i]);
    ++c.metric_samples;
  }
  return Status::Ok();
}

// CUDA graph kernels' ranges: per stream with attributed graph kernels a track "Stream S: graph
// ranges" right below the stream's own, with a slice per range and replay
// (perfetto_graph_ranges.h).
void WriteGraphRanges(const Trace& trace, const GraphKernelPaths& gp,
                      const std::set<std::pair<int32_t, int32_t>>& streams, EventWriter& w,
                      PerfettoExportCounts& c) {
  std::map<std::pair<int32_t, int32_t>, int64_t> ordinal;  // (device, stream) -> index in device
  int32_t last = 0;
  for (const auto& [d, st] : streams) {
    ordinal[{d, st}] = ordinal.empty() || d != last ? 0 : ordinal.rbegin()->second + 1;
    last = d;
  }
  bool sorted = false;
  int32_t sorted_device = 0;
  std::string path;
  ForEachGraphRangeSlice(
      trace, gp,
      [&](int32_t track, int32_t device, int32_t stream) {
        const int64_t pid = kGpuPidBase + device;
        const int64_t tid = kGraphRangesTidBase + track;
        w.Metadata("thread_name", pid, tid, fmt::format("Stream {}: graph ranges", stream));
        // The device's stream tracks in stream order (once per device), each followed by its
        // graph ranges.
        if (!sorted || device != sorted_device) {
          for (auto it = ordinal.lower_bound({device, INT32_MIN});
               it != ordinal.end() && it->first.first == device; ++it) {
            w.ThreadSortIndex(pid, it->first.second, 2 * it->second);
          }
          sorted = true;
          sorted_device = device;
        }
        w.ThreadSortIndex(pid, tid, 2 * ordinal[{device, stream}] + 1);
      },
      [&](const GraphRangeSlice& s) {
        const std::vector<std::string_view>& names = gp.components[s.path];
        path.clear();
        for (int32_t d = 0; d <= s.depth; ++d) {
          if (d > 0) path += " > ";
          path += names[d];
        }
        w.Begin('X', kGpuPidBase + s.device, kGraphRangesTidBase + s.track, s.start_ns);
        w.Name(names[s.depth]);
        w.Field("cat", "graph_range");
        w.Dur(s.end_ns - s.start_ns);
        std::string& o = w.out();
        o += ",\"args\":{\"path\":";
        JsonWriter::AppendEscaped(o, path);
        fmt::format_to(std::back_inserter(o), ",\"kernels\":{},\"attributed_by\":\"{}\"{}}}",
                       s.kernels, PathSourceName(s.source), s.clipped ? ",\"clipped\":true" : "");
        w.End();
        ++c.graph_range_slices;
      });
}

}  // namespace

Status WritePerfettoJson(const Trace& trace, const PerfettoExportOptions& options,
                         const ChunkSink& sink, PerfettoExportCounts* counts) {
  PerfettoExportCounts c;
  EventWriter w(trace.begin_ns(), sink);

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
  // Devices with memory events or metric samples only get their process too (counter tracks).
  for (size_t i = 0; i < trace.counters.size(); ++i) gpus.insert(trace.counters.device[i]);
  if (options.context != nullptr) {
    for (size_t i = 0; i < trace.memory_events.size(); ++i)
      gpus.insert(trace.memory_events.device[i]);
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

  // Graph kernels carry the ranges of their capture (or eager counterpart) as args.
  const GraphKernelPaths gp = ComputeGraphKernelPaths(trace, options.eager_reference);
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
                   ",\"grid\":\"{},{},{}\",\"block\":\"{},{},{}\",\"correlation\":{}", k.grid[i].x,
                   k.grid[i].y, k.grid[i].z, k.block[i].x, k.block[i].y, k.block[i].z,
                   k.correlation[i]);
    if (!gp.source.empty() && gp.graph[i]) {
      fmt::format_to(std::back_inserter(o), ",\"graph_node\":{},\"attributed_by\":\"{}\"",
                     k.graph_node[i], PathSourceName(gp.source[i]));
      if (gp.path[i] >= 0 && !gp.paths[gp.path[i]].empty()) {
        o += ",\"capture_ranges\":";
        JsonWriter::AppendEscaped(o, gp.paths[gp.path[i]]);
      }
    }
    o += '}';
    w.End();
    ++c.kernels;
    flow(k.launch_call[i], pid, k.stream[i], k.start_ns[i]);
  }
  WriteGraphRanges(trace, gp, streams, w, c);
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
  if (options.context != nullptr) WriteHostTracks(trace, *options.context, w, c);
  RETURN_IF_ERROR(WriteCounterTracks(trace, options.context, w, c));
  if (options.iterations != nullptr) WriteIterations(trace, *options.iterations, gpus, w, c);
  if (options.findings != nullptr) WriteFindings(trace, *options.findings, w, c);
  if (counts != nullptr) *counts = c;
  return w.Finish();
}

std::string ExportPerfettoJson(const Trace& trace, PerfettoExportCounts* counts,
                               const PerfettoExportOptions& options) {
  std::string out;
  const Status s = WritePerfettoJson(
      trace, options,
      [&out](std::string_view chunk) {
        out.append(chunk);
        return Status::Ok();
      },
      counts);
  (void)s;  // appending to a string cannot fail
  return out;
}

}  // namespace sightline
