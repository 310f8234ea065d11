// Maps Kineto trace events into the TraceBuilder (what maps to what is listed in
// docs/formats/kineto.md):
//   ph X, cat kernel                  -> KernelRow (args device, stream, correlation, grid, block,
//                                        registers per thread; pid -1: the builder fills the
//                                        launching process from the correlated call)
//   ph X, cat gpu_memcpy / gpu_memset -> MemOpRow (kind and memory kinds from the name; bytes)
//   ph X, cat cuda_runtime/cuda_driver-> ApiCallRow kRuntime / kDriver (args.correlation)
//   ph X, cat cpu_op / user_annotation / python_function -> RangeRow kCpuOp / kUserAnnotation /
//                                        kPythonFunction
//   ph i, cat cpu_instant_event, name [memory] -> MemoryEventRow (args Bytes, Total Allocated,
//                                        Total Reserved, Device Id, Addr) when Device Type is 1
//                                        (CUDA); host memory (Device Type 0) is counted
//   ph M process_name / process_labels / thread_name -> ProcessInfo / ThreadInfo (GPU rows,
//                                        labelled "GPU N", are devices and are left out)
// Everything else (gpu_user_annotation, ac2g and other flows, Trace spans, overhead,
// other cpu_instant_events, cuda_sync, sort-index metadata, ...) is counted per category as an info
// diagnostic. Events of a mapped category with a missing or malformed ts/dur/name/pid/tid are
// counted and dropped. Kineto writes "shared memory" as static + dynamic; the model keeps the two
// apart, so the split of a non-zero value is unknown (-1) and counted.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "importers/kineto/kineto_event.h"
#include "model/trace_builder.h"

namespace sightline::kineto {

class EventMapper {
 public:
  // `offset_ns` is added to every timestamp (Kineto's baseTimeNanoseconds).
  EventMapper(TraceBuilder* builder, TimeNs offset_ns) : builder_(builder), offset_ns_(offset_ns) {}

  void Map(const Event& event);

  // Adds processes and threads from the metadata events and the counted diagnostics.
  void Finish();

  // A rank found in a process label such as "rank 3"; -1 when none.
  int32_t rank_from_labels() const { return rank_from_labels_; }

 private:
  struct Times {
    TimeNs start, end;
  };
  bool GetTimes(const Event& e, Times* t);
  bool GetHostIds(const Event& e, int32_t* pid, int32_t* tid);
  bool GetGpuIds(const Event& e, int32_t* device, int32_t* stream);
  int32_t SyntheticId(std::string_view text, bool is_pid);

  void MapKernel(const Event& e);
  void MapMemOp(const Event& e, bool is_memset);
  void MapApiCall(const Event& e, ApiKind kind);
  void MapRange(const Event& e, RangeKind kind);
  void MapMetadata(const Event& e);
  void MapMemoryEvent(const Event& e);
  void CountUnmapped(const Event& e);
  void Invalid() { ++invalid_; }
  // args.device or args.stream present but unusable (kineto_gpu_id_out_of_range): counted.
  bool GpuIdsOutOfRange(const Event& e);

  TraceBuilder* builder_;
  TimeNs offset_ns_;

  // Counted diagnostics, flushed by Finish().
  int64_t invalid_ = 0;
  int64_t gpu_args_missing_ = 0;
  int64_t gpu_id_out_of_range_ = 0;
  int64_t smem_split_unknown_ = 0;
  int64_t memop_name_unknown_ = 0;
  int64_t ignored_metadata_ = 0;
  int64_t host_memory_events_ = 0;
  int64_t memory_unusable_ = 0;
  int64_t shapes_unreadable_ = 0;
  std::string shapes_;  // reused: an operator's compact shapes (kineto_shapes.h)
  struct Unmapped {
    std::string cat;
    char phase;  // 0, or the phase of a mapped category seen in another phase
    int64_t count;
  };
  std::vector<Unmapped> unmapped_;

  // Metadata, emitted by Finish() once GPU rows are known.
  std::map<int32_t, std::string> process_names_, process_labels_;
  std::map<std::pair<int32_t, int32_t>, std::string> thread_names_;
  std::vector<int32_t> gpu_pids_;
  std::map<std::string, int32_t, std::less<>> synthetic_pids_, synthetic_tids_;
  int32_t rank_from_labels_ = -1;
};

}  // namespace sightline::kineto
