// The per-table mappings of the nsys importer (internal to src/importers/nsys). The large tables
// (kernels, memory operations, API calls, NVTX) come in two halves: Select*() builds the SELECT
// (checking columns first) that NsysParallelScan runs on a worker thread, and Add*Rows() maps the
// resulting chunks into the TraceBuilder on the importing thread. The small tables are read
// directly. Drops are counted in NsysCounts and become diagnostics. A table that is absent means
// "no rows" (nsys creates tables only when they have rows) and is not an error.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "importers/nsys/nsys_enums.h"
#include "importers/nsys/nsys_parallel_scan.h"
#include "importers/nsys/nsys_schema.h"
#include "importers/nsys/nsys_strings.h"
#include "importers/nsys/sqlite_db.h"
#include "model/graph_nodes.h"
#include "model/trace_builder.h"

namespace sightline {

// Processes and threads that own at least one imported event. A system-wide capture lists every
// process of the machine in PROCESSES and ThreadNames; the trace keeps only these.
class NsysSeenIds {
 public:
  void AddProcess(int64_t global_pid) {
    if (global_pid == last_pid_) return;  // rows come in runs from one process
    last_pid_ = global_pid;
    pids_.insert(NsysPidOf(global_pid));
  }
  void AddThread(int64_t global_tid) {
    if (global_tid == last_tid_) return;
    last_tid_ = global_tid;
    pids_.insert(NsysPidOf(global_tid));
    threads_.insert(Key(NsysPidOf(global_tid), NsysTidOf(global_tid)));
  }
  bool HasProcess(int32_t pid) const { return pids_.count(pid) > 0; }
  bool HasThread(int32_t pid, int32_t tid) const { return threads_.count(Key(pid, tid)) > 0; }
  const std::unordered_set<int32_t>& pids() const { return pids_; }
  // (pid, tid) of every thread seen, sorted.
  std::vector<std::pair<int32_t, int32_t>> Threads() const;

 private:
  static int64_t Key(int32_t pid, int32_t tid) {
    return (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
  }
  int64_t last_pid_ = -1, last_tid_ = -1;
  std::unordered_set<int32_t> pids_;
  std::unordered_set<int64_t> threads_;
};

// Rows read but not imported, reported as diagnostics at the end.
struct NsysCounts {
  int64_t api_other_class = 0;   // RUNTIME rows that are neither runtime nor driver calls
  int64_t nvtx_without_end = 0;  // ranges still open when the capture stopped
  int64_t nvtx_marks = 0;
  int64_t nvtx_other = 0;  // categories, thread names, payload-only events, ...
  int64_t gil_ranges = 0;  // "GIL Trace" ranges read into the GIL table (info)
  // Graph kernels whose node has no row in CUDA_GRAPH_NODE_EVENTS (the table present).
  int64_t graph_kernels_without_capture = 0;
  // Rows with a value of the wrong type in an integer column (text where a timestamp belongs),
  // dropped; by table.
  std::map<std::string, int64_t> wrong_type_rows;
  // Rows with an integer too large for the 32-bit field it is read into, dropped; by table.
  std::map<std::string, int64_t> out_of_range_rows;
};

// True when the listed columns of a scanned row all fit the 32-bit fields they are read into
// (device and stream ids, grid and block sizes, registers, shared memory). A row where one does
// not is dropped and counted (out_of_range_rows), never truncated into another device or a
// negative size.
inline bool FitsInt32(const int64_t* row, std::initializer_list<int> columns) {
  for (int c : columns) {
    if (row[c] < INT32_MIN || row[c] > INT32_MAX) return false;
  }
  return true;
}

// The names of nsys's GIL tracing (-t python-gil), interned before the NVTX ranges are read.
struct NsysGilNames {
  StringId domain, holding, waiting;  // "GIL Trace", "Holding GIL", "Waiting for GIL"
  StringId py_sampling;               // "Python Periodic Sampling" (its marks are samples)
};

struct NsysHostBuffers;  // nsys_host.cc

// Graph nodes as nsys records them with --cuda-graph-trace=node (CUDA_GRAPH_NODE_EVENTS, "Graph
// Node Creation"): per node, when and on which thread it was created, and the node it was cloned
// from when a graph was instantiated (originalGraphNodeId). The join is model/graph_nodes.h's.
StatusOr<std::shared_ptr<const GraphNodeIndex>> ReadNsysGraphNodes(SqliteDb& db);
// CUDA_GRAPH_EVENTS' "Graph Creation" rows into trace.graph_creations (none when the table or a
// column is absent: older nsys versions).
Status ReadNsysGraphCreations(SqliteDb& db, Trace& trace);

struct NsysContext {
  SqliteDb& db;
  TraceBuilder& builder;
  NsysStrings& strings;
  const NsysEnums& enums;
  NsysSeenIds seen;
  NsysCounts counts;
  std::map<std::pair<int32_t, int64_t>, StringId> nvtx_domains;  // (pid, domainId) -> name
  NsysGilNames gil = {};
  std::shared_ptr<NsysHostBuffers> host;  // OS calls and scheduling rows until the scan ends
  std::shared_ptr<const GraphNodeIndex> graph_nodes;  // read before the kernels; may be empty
};

// CUPTI_ACTIVITY_KIND_KERNEL -> kernels.
StatusOr<NsysSelect> SelectNsysKernels(SqliteDb& db);
void AddNsysKernelRows(NsysContext& ctx, const NsysChunk& chunk);
// CUPTI_ACTIVITY_KIND_MEMCPY and _MEMSET -> memory operations.
StatusOr<NsysSelect> SelectNsysMemcpys(SqliteDb& db);
void AddNsysMemcpyRows(NsysContext& ctx, const NsysChunk& chunk);
StatusOr<NsysSelect> SelectNsysMemsets(SqliteDb& db);
void AddNsysMemsetRows(NsysContext& ctx, const NsysChunk& chunk);
// CUPTI_ACTIVITY_KIND_RUNTIME -> runtime and driver API calls.
StatusOr<NsysSelect> SelectNsysApiCalls(SqliteDb& db);
void AddNsysApiCallRows(NsysContext& ctx, const NsysChunk& chunk);
// NVTX_EVENTS -> push/pop and start/end ranges; "Holding GIL" / "Waiting for GIL" in the domain
// "GIL Trace" -> the GIL table (ctx.gil must be interned first). The domain names (NvtxDomainCreate
// events) must be added first: all their chunks before the first range chunk.
inline constexpr uint64_t kNsysNvtxDomainTextColumns = 1u << 2;
StatusOr<NsysSelect> SelectNsysNvtxDomains(SqliteDb& db);
void AddNsysNvtxDomainRows(NsysContext& ctx, const NsysChunk& chunk);
inline constexpr uint64_t kNsysNvtxTextColumns = 1u << 4;
StatusOr<NsysSelect> SelectNsysNvtx(SqliteDb& db);
void AddNsysNvtxRows(NsysContext& ctx, const NsysChunk& chunk);

// CUPTI_ACTIVITY_KIND_GRAPH_TRACE: one kernel row per whole-graph run (WholeGraphName).
Status ImportNsysGraphTraces(NsysContext& ctx);
// TARGET_INFO_GPU (or TARGET_INFO_CUDA_GPU) -> devices.
Status ReadNsysDevices(NsysContext& ctx);
// PROCESSES and ThreadNames -> processes and threads, for those in ctx.seen.
Status ReadNsysProcessesAndThreads(NsysContext& ctx);
// GPU_METRICS (nsys_gpu_metrics.cc).
Status ReadNsysGpuMetrics(NsysContext& ctx);
// OSRT_API -> os_calls, SCHED_EVENTS -> off_cpu and the Python samples -> py_samples
// (nsys_host.cc): OS calls and scheduling rows are scanned with the large tables, buffered, and
// mapped by FinishNsysHostTables after the scan, which also reads the samples (it needs the NVTX
// domains); before ReadNsysProcessesAndThreads (the threads they own).
inline constexpr char kNsysOsCallTable[] = "OSRT_API";
inline constexpr char kNsysSchedTable[] = "SCHED_EVENTS";
StatusOr<NsysSelect> SelectNsysOsCalls(SqliteDb& db);
void AddNsysOsCallRows(NsysContext& ctx, const NsysChunk& chunk);
// `skip_threads`: globalTids whose events are left out (profiler threads).
StatusOr<NsysSelect> SelectNsysSched(SqliteDb& db, const std::vector<int64_t>& skip_threads);
// The globalTids of the profiler's own threads (IsProfilerThreadName on ThreadNames' names); empty
// when the export has no thread names.
StatusOr<std::vector<int64_t>> NsysProfilerThreads(SqliteDb& db);
void AddNsysSchedRows(NsysContext& ctx, const NsysChunk& chunk);
Status FinishNsysHostTables(NsysContext& ctx);
// CUDA_GPU_MEMORY_USAGE_EVENTS (nsys_memory_usage.cc).
Status ReadNsysMemoryUsage(NsysContext& ctx);

}  // namespace sightline
