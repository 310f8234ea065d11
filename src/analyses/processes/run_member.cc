#include "analyses/processes/run_member.h"

#include "base/byte_codec.h"
#include "base/file_io.h"
#include "facts/iterations.h"

namespace sightline {
namespace {

// "SRM1": Sightline run member, version 1.
constexpr uint32_t kRunMemberMagic = 0x53524d31;

void PutIntervals(const std::vector<Interval>& v, ByteWriter& w) {
  w.Put<uint64_t>(v.size());
  for (const Interval& i : v) {
    w.Put(i.start_ns);
    w.Put(i.end_ns);
  }
}

std::vector<Interval> GetIntervals(ByteReader& r) {
  std::vector<Interval> v(r.GetCount(16));
  for (Interval& i : v) {
    i.start_ns = r.Get<TimeNs>();
    i.end_ns = r.Get<TimeNs>();
  }
  return v;
}

}  // namespace

StatusOr<RunMember> ComputeRunMember(AnalysisContext& context, const std::string& label,
                                     int input) {
  const Trace& trace = context.trace();
  RunMember m;
  m.label = label;
  m.file = std::string(FileNameOf(trace.source.path));
  m.input = input;
  m.rank = trace.source.rank;
  m.world_size = trace.source.world_size;
  const RunOfTrace& run = trace.run;
  m.run_key = run.key();
  if (m.run_key.empty()) return m;  // no run: nothing more is needed
  m.document = run.document;
  m.host = run.host;
  m.pid = run.pid;
  m.trace_minus_monotonic_ns = run.trace_minus_monotonic_ns;
  m.trace_minus_monotonic_at_end_ns = run.trace_minus_monotonic_at_end_ns;
  m.has_end = run.has_end;
  m.run_start_ns = run.start_monotonic_ns;
  m.run_end_ns = run.end_monotonic_ns;
  m.root_pid = run.root_pid;
  // Onto CLOCK_MONOTONIC with the recording's start offset (its drift to the end is checked by the
  // run analysis, not applied: on one host it is a few hundred ns).
  const DurationNs shift = run.trace_minus_monotonic_ns;
  m.kernels = static_cast<int64_t>(trace.kernels.size());
  m.memops = static_cast<int64_t>(trace.memops.size());
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (trace.kernels.device[i] >= 0 && context.kernels().IsCommunication(trace.kernels.name[i])) {
      ++m.comm_kernels;
    }
  }
  m.devices = context.gpu().GpuDevices();
  for (int32_t d : m.devices) {
    for (const Interval& b : context.gpu().Busy(d))
      m.busy.push_back({b.start_ns - shift, b.end_ns - shift});
  }
  m.busy = MergeIntervals(std::move(m.busy));
  ASSIGN_OR_RETURN(const IterationsResult* it, context.loop().Iterations());
  if (!it->sets.empty()) {
    const IterationSet& set = it->sets[0];
    m.steps_by = it->method;
    m.warmup_steps = set.warmup;
    for (const Iteration& s : set.iterations)
      m.steps.push_back({s.start_ns - shift, s.end_ns - shift});
  }
  m.processes = trace.run_processes;
  for (RunProcess& p : m.processes) {
    p.start_ns -= shift;
    p.end_ns -= shift;
    for (TimeNs& t : p.cpu_end_ns) t -= shift;
  }
  return m;
}

std::string EncodeRunMember(const RunMember& m) {
  ByteWriter w;
  w.Put(kRunMemberMagic);
  for (const std::string* s : {&m.label, &m.file, &m.run_key, &m.document, &m.host}) {
    w.PutString(*s);
  }
  w.Put<int32_t>(m.input);
  w.Put(m.pid);
  w.Put(m.rank);
  w.Put(m.world_size);
  w.Put(m.trace_minus_monotonic_ns);
  w.Put(m.trace_minus_monotonic_at_end_ns);
  w.Put<uint8_t>(m.has_end ? 1 : 0);
  w.Put(m.kernels);
  w.Put(m.memops);
  w.Put(m.comm_kernels);
  w.Put<uint64_t>(m.devices.size());
  for (int32_t d : m.devices) w.Put(d);
  PutIntervals(m.busy, w);
  w.PutString(m.steps_by);
  w.Put(m.warmup_steps);
  PutIntervals(m.steps, w);
  w.Put(m.run_start_ns);
  w.Put(m.run_end_ns);
  w.Put(m.root_pid);
  w.Put<uint64_t>(m.processes.size());
  for (const RunProcess& p : m.processes) {
    w.Put(p.pid);
    w.Put(p.ppid);
    w.PutString(p.name);
    w.PutString(p.command);
    w.PutString(p.recording);
    w.Put(p.start_ns);
    w.Put(p.end_ns);
    w.Put<uint8_t>(p.ended ? 1 : 0);
    w.Put(p.cpu_ns);
    w.Put(p.max_threads);
    w.Put<uint64_t>(p.cpu_end_ns.size());
    for (size_t i = 0; i < p.cpu_end_ns.size(); ++i) {
      w.Put(p.cpu_end_ns[i]);
      w.Put(p.cpu_used_ns[i]);
    }
  }
  return std::move(w.bytes());
}

StatusOr<RunMember> DecodeRunMember(const std::string& blob) {
  ByteReader r(blob);
  if (r.Get<uint32_t>() != kRunMemberMagic) {
    return InternalError("run member: not a version-1 run member blob");
  }
  RunMember m;
  for (std::string* s : {&m.label, &m.file, &m.run_key, &m.document, &m.host}) *s = r.GetString();
  m.input = r.Get<int32_t>();
  m.pid = r.Get<int32_t>();
  m.rank = r.Get<int32_t>();
  m.world_size = r.Get<int32_t>();
  m.trace_minus_monotonic_ns = r.Get<DurationNs>();
  m.trace_minus_monotonic_at_end_ns = r.Get<DurationNs>();
  m.has_end = r.Get<uint8_t>() != 0;
  m.kernels = r.Get<int64_t>();
  m.memops = r.Get<int64_t>();
  m.comm_kernels = r.Get<int64_t>();
  m.devices.resize(r.GetCount(4));
  for (int32_t& d : m.devices) d = r.Get<int32_t>();
  m.busy = GetIntervals(r);
  m.steps_by = r.GetString();
  m.warmup_steps = r.Get<int64_t>();
  m.steps = GetIntervals(r);
  m.run_start_ns = r.Get<TimeNs>();
  m.run_end_ns = r.Get<TimeNs>();
  m.root_pid = r.Get<int32_t>();
  m.processes.resize(r.GetCount(48));
  for (RunProcess& p : m.processes) {
    p.pid = r.Get<int32_t>();
    p.ppid = r.Get<int32_t>();
    p.name = r.GetString();
    p.command = r.GetString();
    p.recording = r.GetString();
    p.start_ns = r.Get<TimeNs>();
    p.end_ns = r.Get<TimeNs>();
    p.ended = r.Get<uint8_t>() != 0;
    p.cpu_ns = r.Get<DurationNs>();
    p.max_threads = r.Get<int64_t>();
    const uint64_t n = r.GetCount(16);
    p.cpu_end_ns.resize(n);
    p.cpu_used_ns.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      p.cpu_end_ns[i] = r.Get<TimeNs>();
      p.cpu_used_ns[i] = r.Get<DurationNs>();
    }
  }
  RETURN_IF_ERROR(r.Finish("run member"));
  return m;
}

}  // namespace sightline
