// One Chrome-trace event of a Kineto trace, as read from `traceEvents` (kineto_read_event.h):
// the fields Sightline uses, with views into the JSON buffer (valid while the buffer and parser
// live). The reader accepts fields in any order and ignores unknown ones; what an event means is
// decided by the mapper (kineto_mapper.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "model/trace.h"

namespace sightline::kineto {

// Kineto's `cat` values that Sightline maps (ActivityType names in libkineto).
enum class Category : uint8_t {
  kMissing,  // no `cat` field
  kKernel,   // "kernel"; PyTorch 1.x: "Kernel", "Memcpy", "Memset", "Runtime", "Operator"
  kGpuMemcpy,
  kGpuMemset,
  kCudaRuntime,
  kCudaDriver,
  kCpuOp,
  kUserAnnotation,
  kPythonFunction,
  kOther,  // anything else; counted by its text
};
Category ClassifyCategory(std::string_view cat);

// A pid or tid: Kineto writes ints, and strings for its own rows ("Spans", "Traces", "").
struct EventId {
  enum Kind : uint8_t { kMissing, kInt, kString, kInvalid } kind = kMissing;
  int64_t value = 0;
  std::string_view text;  // kString: the unescaped string
};

// args fields that some category uses; `kUnset` where absent or not an integer.
struct EventArgs {
  static constexpr int64_t kUnset = INT64_MIN;
  int64_t device = kUnset, stream = kUnset, correlation = kUnset;
  // device or stream present but not an int64 (beyond it, or not a number): the event is dropped
  // (kineto_gpu_id_out_of_range), never read as if the id were absent.
  bool device_bad = false, stream_bad = false;
  int64_t registers_per_thread = kUnset, shared_memory = kUnset, bytes = kUnset;
  Dim3 grid, block;
  bool has_grid = false, has_block = false;
  std::string_view name, labels;  // metadata events: args.name / args.labels
  bool has_name = false, has_labels = false;
  // PyTorch's `[memory]` instant events: Bytes (negative on free), Total Allocated, Total
  // Reserved, Device Id, Device Type (1 = CUDA), Addr.
  int64_t mem_bytes = kUnset, total_allocated = kUnset, total_reserved = kUnset;
  int64_t device_id = kUnset, device_type = kUnset, addr = kUnset;
  // PyTorch's record_param_comms (a collective's host range): Seq, Process Group Name, Collective
  // name.
  int64_t seq = kUnset;
  std::string_view pg_name, collective_name;
  bool has_pg_name = false, has_collective_name = false;
  // PyTorch operators recorded with shapes (record_shapes=True): the raw JSON arrays of
  // "Input Dims" and "Input type" (kineto_shapes.h makes them compact); shapes_bad when either is
  // present but not an array.
  std::string_view input_dims, input_types;
  bool shapes_bad = false;
};

struct Event {
  char ph = 0;  // 0 when missing
  Category category = Category::kMissing;
  std::string_view cat;  // raw text of `cat` (for counting unmapped categories)
  std::string_view name;
  bool has_name = false;
  EventId pid, tid;
  int64_t ts_ns = 0, dur_ns = 0;  // microsecond text converted exactly
  bool has_ts = false, has_dur = false;
  bool bad_value = false;   // a used field had the wrong type or did not fit
  bool not_object = false;  // the element is not a JSON object
  bool args_read = false;   // `args` was read (else it holds its defaults)
  EventArgs args;           // last: ReadEvent resets the fields before it apart from it
};

}  // namespace sightline::kineto
