// The trace model: one profile of one process group on one machine, as columnar tables (structs of
// arrays) sorted by start time. Importers fill a TraceBuilder; analyses read a const Trace.
// Time is int64 ns on the importer's clock; names are interned StringIds into `strings`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/string_pool.h"
#include "base/time_units.h"
#include "model/diagnostics.h"
#include "model/run_processes.h"

namespace sightline {

inline constexpr int32_t kNoRow = -1;  // an unset row index (e.g. a kernel with no launching call)

struct Dim3 {
  int32_t x = 0, y = 0, z = 0;  // 0 = unknown
  // x * y * z; 0 when a dimension is unknown; -1 when one is negative or the product passes
  // int64 (no launch has either: a hostile or damaged file), so that `Count() <= 0` skips both.
  int64_t Count() const {
    if (x < 0 || y < 0 || z < 0) return -1;
    int64_t xy = 0, xyz = 0;
    if (__builtin_mul_overflow(int64_t{x}, int64_t{y}, &xy) ||
        __builtin_mul_overflow(xy, int64_t{z}, &xyz)) {
      return -1;
    }
    return xyz;
  }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// GPU kernels, one row per kernel execution (CUDA graph kernels included, one row each).
struct KernelTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> device;       // CUDA device id
  std::vector<int32_t> stream;       // stream id as the source numbers it
  std::vector<int32_t> pid;          // launching process; -1 unknown
  std::vector<StringId> name;        // full demangled name
  std::vector<StringId> short_name;  // display name (no return type, templates, parameters)
  std::vector<int64_t> correlation;  // id shared with the launching API call; -1 none
  std::vector<Dim3> grid, block;
  std::vector<int32_t> registers_per_thread;  // -1 unknown
  std::vector<int32_t> static_smem_bytes;     // -1 unknown
  std::vector<int32_t> dynamic_smem_bytes;    // -1 unknown
  std::vector<int32_t> launch_call;           // row in ApiCallTable; kNoRow when not linked
  // CUDA graphs (docs/analyses/cuda_graphs.md): the graph node a kernel ran from (0: not from a
  // graph, or not known), and where that node was captured: the node it was cloned from at
  // instantiation (0 unknown), the capturing thread and the time of the capture (-1 unknown).
  std::vector<int64_t> graph_node;
  std::vector<int64_t> capture_node;
  std::vector<TimeNs> capture_ns;
  std::vector<int32_t> capture_pid, capture_tid;

  // Applies f to every column vector (for reserving and reordering all columns alike).
  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(device);
    f(stream);
    f(pid);
    f(name);
    f(short_name);
    f(correlation);
    f(grid);
    f(block);
    f(registers_per_thread);
    f(static_smem_bytes);
    f(dynamic_smem_bytes);
    f(launch_call);
    f(graph_node);
    f(capture_node);
    f(capture_ns);
    f(capture_pid);
    f(capture_tid);
  }

  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

enum class MemOpKind : uint8_t { kHtoD, kDtoH, kDtoD, kHtoH, kPtoP, kMemset, kOther };
enum class MemoryKind : uint8_t { kUnknown, kPageable, kPinned, kDevice, kArray, kManaged };
const char* MemOpKindName(MemOpKind kind);    // "HtoD", "memset", ...
const char* MemoryKindName(MemoryKind kind);  // "pageable", "pinned", ...
// What an allocation is for, where its source says (a PyTorch memory snapshot's allocating
// stacks: importers/torch_snapshot/memory_purpose.h; docs/analyses/memory.md, "Memory by
// purpose"): kOther = a stack that no rule names, kUnknown = no stack.
enum class MemoryPurpose : uint8_t {
  kUnknown,
  kWeights,
  kKvCache,
  kActivations,  // and workspace
  kCudaGraphPool,
  kOther
};

// GPU memory operations: copies and sets.
struct MemOpTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> device, stream, pid;
  std::vector<MemOpKind> kind;
  std::vector<MemoryKind> src_kind, dst_kind;  // memset: dst_kind is the memory set
  std::vector<int64_t> size_bytes;
  std::vector<int64_t> correlation;
  std::vector<int32_t> launch_call;  // row in ApiCallTable; kNoRow when not linked

  // Applies f to every column vector (for reserving and reordering all columns alike).
  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(device);
    f(stream);
    f(pid);
    f(kind);
    f(src_kind);
    f(dst_kind);
    f(size_bytes);
    f(correlation);
    f(launch_call);
  }

  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

enum class ApiKind : uint8_t { kRuntime, kDriver };
// What an API call does, from its name (ClassifyApiName); analyses use it to explain host time.
enum class ApiClass : uint8_t { kLaunch, kSync, kMemcpy, kMemset, kAlloc, kGraph, kOther };
const char* ApiClassName(ApiClass c);
ApiClass ClassifyApiName(std::string_view name);

// Host-side CUDA runtime and driver API calls.
struct ApiCallTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;
  std::vector<StringId> name;  // version suffix removed: "cudaLaunchKernel", not "..._v7000"
  std::vector<ApiKind> kind;
  std::vector<ApiClass> api_class;
  std::vector<int64_t> correlation;  // -1 none

  // Applies f to every column vector (for reserving and reordering all columns alike).
  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
    f(name);
    f(kind);
    f(api_class);
    f(correlation);
  }

  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

enum class RangeKind : uint8_t {
  kNvtxPushPop,     // nvtxRangePush/Pop (nsys event type 59)
  kNvtxStartEnd,    // nvtxRangeStart/End (type 60); may end on another thread
  kUserAnnotation,  // PyTorch record_function / user_annotation (incl. ProfilerStep#N)
  kCpuOp,           // PyTorch operator (aten::...)
  kPythonFunction,  // PyTorch python stack frames
};
const char* RangeKindName(RangeKind kind);

// Host-side ranges: NVTX and PyTorch annotations and ops. depth/parent come from nesting on the
// same thread (computed by TraceBuilder::Finish).
struct RangeTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;
  std::vector<StringId> name;
  std::vector<StringId> domain;  // NVTX domain name; empty for default and for PyTorch ranges
  std::vector<RangeKind> kind;
  std::vector<int32_t> depth;   // 0 = outermost on its thread
  std::vector<int32_t> parent;  // row of the enclosing range on the same thread; kNoRow if none
  // PyTorch operators recorded with shapes (record_shapes=True): the operands' dimensions and
  // element types, compact and interned ("16x2048,2048x2048,|c10::BFloat16;c10::BFloat16;"):
  // operands separated by ',', dimensions by 'x', a scalar operand empty, one that is not a tensor
  // of integers (a tensor list) '?'; after '|' the types separated by ';'. Empty: none recorded.
  std::vector<StringId> shapes;

  // Applies f to every column vector (for reserving and reordering all columns alike).
  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
    f(name);
    f(domain);
    f(kind);
    f(depth);
    f(parent);
    f(shapes);
  }

  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

// GPU memory allocations and frees (nsys --cuda-memory-usage=true): one row per event, in time
// order. `bytes` is signed: + allocated, − freed. What the trace shows only: memory allocated
// before the capture, by other processes, or inside a caching allocator's blocks is not here.
// PyTorch's profiler (`[memory]` events, profile_memory=True) reports its caching allocator's
// tensor allocations instead, with the allocator's totals after each event: `total_allocated`
// and `total_reserved` (-1 where the source has none, as in nsys), and the allocating thread.
// A PyTorch memory snapshot gives the same totals, the allocating call site as `name`, and
// totals-only rows (bytes 0, address 0) where the allocator's reserved memory changes; its stacks
// give each allocation's `purpose` (and a CUDA graph pool's segment rows theirs), and rows
// marked `predates` carry the state before its history: blocks alive at the dump that the history
// does not explain, placed at the device's first event.
struct MemoryEventTable {
  std::vector<TimeNs> time_ns;
  std::vector<int32_t> device, pid;
  std::vector<int32_t> tid;  // the allocating thread; -1 unknown (nsys: see `correlation`)
  std::vector<int64_t> bytes;
  std::vector<uint64_t> address;
  std::vector<MemoryKind> kind;
  std::vector<int64_t> correlation;  // the allocating or freeing API call's; -1 none
  std::vector<StringId> name;        // static allocations: the symbol; else empty
  std::vector<int64_t> total_allocated, total_reserved;  // after the event; -1 unknown
  // Stream-ordered pools (cudaMallocAsync): the pool the memory came from (its base address; 0
  // none) and the pool's size after the event (-1 unknown). A row with bytes 0 and address 0
  // changes only a pool's size (created, trimmed, destroyed) or an allocator's totals.
  std::vector<uint64_t> pool;
  std::vector<int64_t> pool_size;
  std::vector<StringId> source;  // the library that asked for it (libnccl.so.2); empty unknown
  std::vector<MemoryPurpose> purpose;  // kUnknown where the source has no stacks
  std::vector<uint8_t> predates;       // 1: allocated before the events (known from a state dump)

  template <typename F>
  void ForEachColumn(F&& f) {
    f(time_ns);
    f(device);
    f(pid);
    f(tid);
    f(total_allocated);
    f(total_reserved);
    f(bytes);
    f(address);
    f(kind);
    f(correlation);
    f(name);
    f(pool);
    f(pool_size);
    f(source);
    f(purpose);
    f(predates);
  }
  size_t size() const { return time_ns.size(); }
};

// Sampled GPU metrics (nsys --gpu-metrics-devices): one row per sample of one metric on one device.
// A sample covers [time_ns, the next sample of the same metric and device). Metrics are
// device-wide: other processes on the GPU count too.
struct CounterTable {
  std::vector<TimeNs> time_ns;
  std::vector<int32_t> device;
  std::vector<StringId> name;  // "SMs Active [Throughput %]": the unit is in the name
  std::vector<double> value;

  template <typename F>
  void ForEachColumn(F&& f) {
    f(time_ns);
    f(device);
    f(name);
    f(value);
  }
  size_t size() const { return time_ns.size(); }
};

struct DeviceInfo {
  int32_t id = -1;
  std::string name;
  int32_t sm_count = 0;  // 0 = unknown
  int32_t cc_major = 0, cc_minor = 0;
  int64_t total_memory_bytes = 0;
  int32_t max_threads_per_sm = 0;
  int32_t max_blocks_per_sm = 0;
  int32_t registers_per_sm = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  int64_t shared_memory_per_block_optin_bytes = 0;
  int64_t l2_cache_bytes = 0;
  int64_t clock_rate_hz = 0;
  int64_t memory_bandwidth_bytes_per_s = 0;
};

struct ProcessInfo {
  int32_t pid = -1;
  std::string name;
};

// What a host thread does, as far as the trace shows (set by TraceBuilder::Finish): kLaunching
// issues CUDA launch calls (kernels, copies, graphs); kProfiler is a profiler's own thread (nsys's
// Python sampler "NSys PySampling"), never blamed for what the application waits on; kOther is the
// rest. A profiler thread that launches stays kProfiler.
enum class ThreadRole : uint8_t { kLaunching, kProfiler, kOther };
const char* ThreadRoleName(ThreadRole role);  // "launching", "profiler", "other"
// Whether a thread's name is a profiler's own thread ("NSys PySampling", "nsys-...").
bool IsProfilerThreadName(std::string_view name);

struct ThreadInfo {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;  // computed by TraceBuilder::Finish; importers leave it
};

// The Python GIL per thread (nsys -t python-gil: "Holding GIL" / "Waiting for GIL"): one row per
// interval a thread held or waited for it, sorted by start. Intervals of one thread and state may
// touch or repeat; analyses take unions.
enum class GilState : uint8_t { kHeld, kWaited };
struct GilTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;
  std::vector<GilState> state;

  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
    f(state);
  }
  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

// Host OS runtime calls (nsys -t osrt: poll, pthread_cond_wait, read, ioctl, ...): one row per
// call, sorted by start. Not part of the trace's span (a poll can outlast the capture's work).
struct OsCallTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;
  std::vector<StringId> name;  // the function: "poll", "pthread_cond_wait"
  // Its call chain where the capture has one (nsys OSRT_CALLCHAINS: only calls longer than the
  // backtrace threshold get one): frames[first_frame, first_frame + frame_count), innermost first
  // (the OS function itself), each interned as "symbol (module file name)"; frame_count 0 without.
  std::vector<int64_t> first_frame;
  std::vector<int32_t> frame_count;
  std::vector<StringId> frames;  // the chains, back to back; not a column (rows index into it)

  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
    f(name);
    f(first_frame);
    f(frame_count);
  }
  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

// Collectives as the host saw them: PyTorch's record_param_comms ranges with the collective's
// identity (Kineto args "Process Group Name", "Seq", "Collective name"). A communication kernel
// launched inside one belongs to that collective (analyses/ranks/ranks.h matches ranks by it).
// Sorted by start; not part of the trace's span.
struct CollectiveTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;
  std::vector<StringId> communicator;  // the process group's name ("0", "3")
  std::vector<StringId> name;          // "allreduce", "_allgather_base"; empty when not given
  std::vector<int64_t> seq;            // the collective's sequence number in its process group

  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
    f(communicator);
    f(name);
    f(seq);
  }
  size_t size() const { return start_ns.size(); }
};

// Off-CPU intervals of host threads from the scheduler's context switches (nsys --cpuctxsw): from
// a thread's switch-out to its next switch-in, sorted by start. Not part of the trace's span.
struct OffCpuTable {
  std::vector<TimeNs> start_ns, end_ns;
  std::vector<int32_t> pid, tid;

  template <typename F>
  void ForEachColumn(F&& f) {
    f(start_ns);
    f(end_ns);
    f(pid);
    f(tid);
  }
  size_t size() const { return start_ns.size(); }
  DurationNs dur_ns(size_t i) const { return end_ns[i] - start_ns[i]; }
};

// Python call-stack samples (nsys --python-sampling, exported with --include-json=true): one row
// per sample, sorted by time; its stack is frames[first_frame, first_frame + frame_count),
// innermost first, each frame interned as "function (file:line)". A sample without a stack has
// frame_count 0. Not part of the trace's span.
struct StackSampleTable {
  std::vector<TimeNs> time_ns;
  std::vector<int32_t> pid, tid;
  std::vector<int64_t> first_frame;
  std::vector<int32_t> frame_count;
  std::vector<StringId> frames;  // the stacks, back to back; not a column (rows index into it)

  template <typename F>
  void ForEachColumn(F&& f) {
    f(time_ns);
    f(pid);
    f(tid);
    f(first_frame);
    f(frame_count);
  }
  size_t size() const { return time_ns.size(); }
};

// Where the trace came from.
struct TraceSource {
  std::string path;
  std::string format;          // "nsys-sqlite", "kineto-json", ...
  std::string format_version;  // nsys export schema "3.16.1"; Kineto schemaVersion
  std::string producer;        // "NVIDIA Nsight Systems 2024.6.2.225", "PyTorch Profiler", ...
  int32_t rank = -1;           // distributed rank when known
  int32_t world_size = 0;      // 0 unknown
  // The host the trace was taken on, when the trace says (nsys: TARGET_INFO_SYSTEM_ENV Hostname);
  // ranks on one host share a clock (analyses/ranks/ranks.h). Empty: unknown.
  std::string host;
};

// A CUDA graph created (nsys CUDA_GRAPH_EVENTS, "Graph Creation"; the recorder's graph_event
// records): a captured graph is created as its capture begins, on the capturing thread, so the
// creation names the capture that made each graph id. A graph cloned from another (recorder) takes
// its original's creation: its work is the original's capture.
struct GraphCreation {
  int64_t graph_id = 0;
  TimeNs time_ns = 0;
  int32_t pid = -1, tid = -1;
};

class TraceBuilder;

struct Trace {
  TraceSource source;
  StringPool strings;
  KernelTable kernels;
  MemOpTable memops;
  ApiCallTable api_calls;
  RangeTable ranges;
  GilTable gil;                     // sorted by start; part of the trace's span
  CounterTable counters;            // sorted by time; not part of the trace's span
  MemoryEventTable memory_events;   // sorted by time; not part of the trace's span
  OsCallTable os_calls;             // sorted by start; not part of the trace's span
  OffCpuTable off_cpu;              // sorted by start; not part of the trace's span
  CollectiveTable collectives;      // sorted by start; not part of the trace's span
  StackSampleTable py_samples;      // Python frames; sorted by time; not part of the span
  StackSampleTable cpu_samples;     // native frames; sorted by time; not part of the span
  std::vector<DeviceInfo> devices;  // sorted by id
  std::vector<ProcessInfo> processes;
  std::vector<ThreadInfo> threads;             // sorted by (pid, tid); those the importer named
  std::vector<GraphCreation> graph_creations;  // sorted by time
  // The processes of the run the trace was recorded in (recorder traces with the run's process
  // tree beside them), sorted by start; not part of the trace's span.
  std::vector<RunProcess> run_processes;
  RunOfTrace run;  // the run those processes are of, and this trace's clock against it
  Diagnostics diagnostics;

  std::string_view str(StringId id) const { return strings.Get(id); }
  const DeviceInfo* FindDevice(int32_t id) const;
  // First and last timestamp over all GPU and host events; {0,0} when empty.
  TimeNs begin_ns() const { return begin_ns_; }
  TimeNs end_ns() const { return end_ns_; }
  bool HasGpuWork() const { return kernels.size() + memops.size() > 0; }

 private:
  friend class TraceBuilder;
  TimeNs begin_ns_ = 0, end_ns_ = 0;
};

}  // namespace sightline
