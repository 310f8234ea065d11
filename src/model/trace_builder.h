// TraceBuilder: the one way importers make a Trace. Importers append rows in any order; Finish()
// sorts every table by start time, links kernels and memory operations to their launching API
// calls (same correlation id and process), computes range nesting, and counts what it could not
// link.
#pragma once

#include <string_view>
#include <vector>

#include "base/input_limits.h"
#include "base/status.h"
#include "model/trace.h"

namespace sightline {

struct KernelRow {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t device = 0, stream = 0, pid = -1;
  StringId name, short_name;  // short_name empty: derived from name with ShortKernelName()
  int64_t correlation = -1;
  Dim3 grid, block;
  int32_t registers_per_thread = -1, static_smem_bytes = -1, dynamic_smem_bytes = -1;
  // CUDA graphs: KernelTable's columns of the same names.
  int64_t graph_node = 0, capture_node = 0;
  TimeNs capture_ns = -1;
  int32_t capture_pid = -1, capture_tid = -1;
};

struct MemOpRow {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t device = 0, stream = 0, pid = -1;
  MemOpKind kind = MemOpKind::kOther;
  MemoryKind src_kind = MemoryKind::kUnknown, dst_kind = MemoryKind::kUnknown;
  int64_t size_bytes = 0;
  int64_t correlation = -1;
};

struct ApiCallRow {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  std::string_view name;  // a version suffix such as "_v7000" is removed by the builder
  ApiKind kind = ApiKind::kRuntime;
  int64_t correlation = -1;
};

struct RangeRow {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  StringId name, domain;
  RangeKind kind = RangeKind::kNvtxPushPop;
  StringId shapes;  // RangeTable::shapes
};

struct GilRow {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  GilState state = GilState::kHeld;
};

class TraceBuilder {
 public:
  TraceBuilder() = default;

  // Strings longer than kMaxStringBytes (base/input_limits.h) are cut, with a note of how much,
  // and counted (string_cut): one megabyte-long name must not cost memory many times over.
  StringId Intern(std::string_view s) {
    if (s.size() > kMaxStringBytes) [[unlikely]]
      return InternCut(s);
    return trace_.strings.Intern(s);
  }
  TraceSource& source() { return trace_.source; }
  Diagnostics& diagnostics() { return trace_.diagnostics; }

  // Rows with end < start are counted ("negative_duration") and dropped.
  void AddKernel(const KernelRow& row);
  void AddMemOp(const MemOpRow& row);
  void AddApiCall(const ApiCallRow& row);
  void AddRange(const RangeRow& row);
  // A collective's host range with its process group and sequence number (CollectiveTable).
  void AddCollective(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid,
                     StringId communicator, StringId name, int64_t seq);
  void AddGil(const GilRow& row);
  // OS runtime calls and off-CPU intervals; rows with end < start are counted and dropped. An OS
  // call's call chain, innermost frame first, may be empty (OsCallTable).
  void AddOsCall(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid, StringId name,
                 const std::vector<StringId>& chain = {});
  void AddOffCpu(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid);
  // A Python sample with its stack, innermost frame first (may be empty).
  void AddPySample(TimeNs time_ns, int32_t pid, int32_t tid, const std::vector<StringId>& stack);
  // A CPU (native) sample with its stack, innermost frame first (may be empty).
  void AddCpuSample(TimeNs time_ns, int32_t pid, int32_t tid, const std::vector<StringId>& stack);
  // A sample whose value is NaN or infinite is counted (value_not_finite) and dropped.
  void AddCounter(TimeNs time_ns, int32_t device, StringId name, double value);
  struct MemoryEventRow {
    TimeNs time_ns = 0;
    int32_t device = -1, pid = -1, tid = -1;
    int64_t bytes = 0;                                  // + allocated, − freed
    int64_t total_allocated = -1, total_reserved = -1;  // an allocator's totals after it
    uint64_t address = 0;
    MemoryKind kind = MemoryKind::kUnknown;
    int64_t correlation = -1;
    StringId name;
    uint64_t pool = 0;       // the stream-ordered pool's base address; 0 none
    int64_t pool_size = -1;  // that pool's size after the event; -1 unknown
    StringId source;         // the library that asked for it
    MemoryPurpose purpose = MemoryPurpose::kUnknown;
    bool predates = false;  // allocated before the events: a state dump's, at the first event
  };
  void AddMemoryEvent(const MemoryEventRow& row);
  void AddDevice(const DeviceInfo& device);  // a second device with the same id replaces the first
  void AddProcess(const ProcessInfo& process);
  void AddThread(const ThreadInfo& thread);
  // A CUDA graph's creation (Trace::graph_creations; sorted by time at Finish).
  void AddGraphCreation(const GraphCreation& creation) {
    trace_.graph_creations.push_back(creation);
  }

  // The processes of the recorded run (Trace::run_processes), sorted by start by the caller, and
  // the run they are of (Trace::run).
  void SetRunProcesses(std::vector<RunProcess> processes, RunOfTrace run = {}) {
    trace_.run_processes = std::move(processes);
    trace_.run = std::move(run);
  }

  void Reserve(size_t kernels, size_t memops, size_t api_calls, size_t ranges);

  // Drops intervals longer than the trace can hold (absurd_duration: more than twice the span of
  // all start times plus a minute; a corrupt end time would stretch every figure), sorts, links,
  // sets the roles of the listed threads and returns the trace. The builder is empty afterwards.
  Trace Finish();

 private:
  bool CheckDuration(TimeNs start, TimeNs end);
  StringId InternCut(std::string_view s);
  void DropFarTimes();
  void DropAbsurdDurations();
  void SortTables();
  void LinkLaunches();
  void ComputeRangeNesting();
  void ComputeThreadRoles();
  void ComputeSpan();

  Trace trace_;
  std::vector<StringId> short_name_cache_;  // by full-name id
  std::vector<uint8_t> api_class_cache_;    // by name id; 0xff = not yet classified
};

// "at::native::vectorized_elementwise_kernel" from
// "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)": return type, template
// arguments and parameter list removed; names that are not C++ signatures come back unchanged.
std::string ShortKernelName(std::string_view full_name);

// A CUDA graph run traced as a whole (nsys --cuda-graph-trace=graph, the default there; sightline
// record --cuda-graph-trace graph) becomes one kernel row on its stream named
// WholeGraphName(graph id), "CUDA graph 3 (whole graph)", so GPU time and idle gaps stay right;
// importers report how many with NoteWholeGraphRuns (info diagnostic `whole_graph_runs`).
std::string WholeGraphName(int64_t graph_id);
bool IsWholeGraphName(std::string_view name);  // the kernel category "CUDA graph"
void NoteWholeGraphRuns(Diagnostics& diagnostics, int64_t runs);

// "cudaLaunchKernel" from "cudaLaunchKernel_v7000" (nsys appends the API version).
std::string_view StripApiVersionSuffix(std::string_view name);

}  // namespace sightline
