#include "importers/kineto/kineto_read_event.h"

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "importers/kineto/kineto_json.h"
#include "importers/kineto/kineto_numbers.h"

namespace sightline::kineto {
namespace {

using simdjson::error_code;
using simdjson::INCORRECT_TYPE;
using simdjson::SUCCESS;

void ReadId(sj::value& v, EventId* id) {
  const std::string_view token = ScalarToken(v);
  if (!token.empty() && token[0] == '"') {
    std::string_view s;
    if (!ReadString(v, &s)) {
      id->kind = EventId::kInvalid;
    } else if (ParseInt64(s, &id->value)) {
      id->kind = EventId::kInt;
    } else {
      id->kind = EventId::kString;
      id->text = s;
    }
    return;
  }
  id->kind = ReadInt(v, &id->value) ? EventId::kInt : EventId::kInvalid;
}

// [x, y, z] with three integers; anything else leaves *ok false.
error_code ReadDim3(sj::value& v, Dim3* dim, bool* ok) {
  *ok = false;
  sj::array array;
  if (v.get_array().get(array) != SUCCESS) return SUCCESS;  // not an array: ignored
  int32_t xyz[3] = {0, 0, 0};
  int n = 0;
  bool valid = true;
  for (auto element : array) {
    sj::value item;
    if (error_code e = std::move(element).get(item)) return e;
    int64_t x;
    if (n >= 3 || !ReadInt(item, &x) || x < 0 || x > INT32_MAX) {
      valid = false;
    } else {
      xyz[n] = static_cast<int32_t>(x);
    }
    ++n;
  }
  if (valid && n == 3) {
    *dim = Dim3{xyz[0], xyz[1], xyz[2]};
    *ok = true;
  }
  return SUCCESS;
}

// The raw text of an array value ("[[16, 2048], []]"); false when it is not an array.
bool ReadRawArray(sj::value& v, std::string_view* out) {
  sj::array array;
  return v.get_array().get(array) == SUCCESS && array.raw_json().get(*out) == SUCCESS;
}

void ReadIntArg(sj::value& v, int64_t* out) {
  if (!ReadInt(v, out)) *out = EventArgs::kUnset;
}

// A device or stream id: present, so one that cannot be read is marked, not taken as absent.
void ReadIdArg(sj::value& v, int64_t* out, bool* bad) {
  if (!ReadInt(v, out)) {
    *out = EventArgs::kUnset;
    *bad = true;
  }
}

error_code ReadArgs(sj::value& v, EventArgs* args) {
  sj::object object;
  if (v.get_object().get(object) != SUCCESS) return SUCCESS;  // args that are not an object
  for (auto field_result : object) {
    // The field is used where the iterator built it: moving it out first (get(field)) copies it
    // through the stack in pieces, a store-forwarding stall on every field.
    if (error_code e = field_result.error()) return e;
    sj::field& field = field_result.value_unsafe();
    const sj::raw_json_string key = field.key();
    sj::value& value = field.value();
    switch (key.raw()[0]) {
      case 'A':
        if (key.unsafe_is_equal("Addr")) ReadIntArg(value, &args->addr);
        break;
      case 'B':
        if (key.unsafe_is_equal("Bytes")) ReadIntArg(value, &args->mem_bytes);
        break;
      case 'I':
        if (key.unsafe_is_equal("Input Dims")) {
          if (!ReadRawArray(value, &args->input_dims)) args->shapes_bad = true;
        } else if (key.unsafe_is_equal("Input type")) {
          if (!ReadRawArray(value, &args->input_types)) args->shapes_bad = true;
        }
        break;
      case 'C':
        if (key.unsafe_is_equal("Collective name")) {
          args->has_collective_name = ReadString(value, &args->collective_name);
        }
        break;
      case 'P':
        if (key.unsafe_is_equal("Process Group Name")) {
          args->has_pg_name = ReadString(value, &args->pg_name);
        }
        break;
      case 'S':
        if (key.unsafe_is_equal("Seq")) ReadIntArg(value, &args->seq);
        break;
      case 'D':
        if (key.unsafe_is_equal("Device Id")) {
          ReadIntArg(value, &args->device_id);
        } else if (key.unsafe_is_equal("Device Type")) {
          ReadIntArg(value, &args->device_type);
        }
        break;
      case 'T':
        if (key.unsafe_is_equal("Total Allocated")) {
          ReadIntArg(value, &args->total_allocated);
        } else if (key.unsafe_is_equal("Total Reserved")) {
          ReadIntArg(value, &args->total_reserved);
        }
        break;
      case 'b':
        if (key.unsafe_is_equal("bytes")) {
          ReadIntArg(value, &args->bytes);
        } else if (key.unsafe_is_equal("block")) {
          if (error_code e = ReadDim3(value, &args->block, &args->has_block)) return e;
        }
        break;
      case 'c':
        if (key.unsafe_is_equal("correlation")) ReadIntArg(value, &args->correlation);
        break;
      case 'd':
        if (key.unsafe_is_equal("device")) ReadIdArg(value, &args->device, &args->device_bad);
        break;
      case 'g':
        if (key.unsafe_is_equal("grid")) {
          if (error_code e = ReadDim3(value, &args->grid, &args->has_grid)) return e;
        }
        break;
      case 'l':
        if (key.unsafe_is_equal("labels")) args->has_labels = ReadString(value, &args->labels);
        break;
      case 'n':
        if (key.unsafe_is_equal("name")) args->has_name = ReadString(value, &args->name);
        break;
      case 'r':
        if (key.unsafe_is_equal("registers per thread")) {
          ReadIntArg(value, &args->registers_per_thread);
        }
        break;
      case 's':
        if (key.unsafe_is_equal("stream")) {
          ReadIdArg(value, &args->stream, &args->stream_bad);
        } else if (key.unsafe_is_equal("shared memory")) {
          ReadIntArg(value, &args->shared_memory);
        }
        break;
      default:
        break;
    }
  }
  return SUCCESS;
}

// Whether `args` can matter for this event, given what was read before it (usually ph and cat
// come first; sorted-key files put args first, and then everything is read).
bool WantArgs(const Event& e) {
  const bool instant = e.ph == 'i' || e.ph == 'I';  // PyTorch's [memory] events
  if (e.ph != 0 && e.ph != 'X' && e.ph != 'M' && !instant) return false;
  switch (e.category) {
    case Category::kCpuOp:
      // A collective's identity (record_param_comms), and every operator's shapes where the
      // profiler recorded them (record_shapes=True).
      return true;
    case Category::kUserAnnotation:
    case Category::kPythonFunction:
      return e.ph == 'M';
    case Category::kOther:
      return e.ph == 'M' || instant;
    default:
      return true;
  }
}

}  // namespace

error_code ReadEvent(sj::value& element, Event* event) {
  // Resetting all of the event (args are most of its bytes) for every element costs about as
  // much as reading a small element: the args go back to their defaults only when they were read.
  static_assert(std::is_standard_layout_v<Event> && std::is_trivially_copyable_v<Event>);
  static const Event kEmpty;
  if (event->args_read) event->args = kEmpty.args;
  std::memcpy(static_cast<void*>(event), &kEmpty, offsetof(Event, args));
  sj::object object;
  if (error_code e = element.get_object().get(object)) {
    if (e != INCORRECT_TYPE) return e;
    event->not_object = true;
    return SUCCESS;
  }
  for (auto field_result : object) {
    // The field is used where the iterator built it: moving it out first (get(field)) copies it
    // through the stack in pieces, a store-forwarding stall on every field.
    if (error_code e = field_result.error()) return e;
    sj::field& field = field_result.value_unsafe();
    const sj::raw_json_string key = field.key();
    sj::value& value = field.value();
    switch (key.raw()[0]) {
      case 'p':
        if (key.unsafe_is_equal("ph")) {
          std::string_view ph;
          if (ReadString(value, &ph) && ph.size() == 1) {
            event->ph = ph[0];
          } else {
            event->ph = '?';
          }
        } else if (key.unsafe_is_equal("pid")) {
          ReadId(value, &event->pid);
        }
        break;
      case 'c':
        if (key.unsafe_is_equal("cat")) {
          if (ReadString(value, &event->cat)) {
            event->category = ClassifyCategory(event->cat);
          } else {
            event->category = Category::kOther;
            event->cat = "(not a string)";
          }
        }
        break;
      case 'n':
        if (key.unsafe_is_equal("name")) {
          event->has_name = ReadString(value, &event->name);
          if (!event->has_name) event->bad_value = true;
        }
        break;
      case 't':
        if (key.unsafe_is_equal("ts")) {
          event->has_ts = ReadTime(value, &event->ts_ns);
          if (!event->has_ts) event->bad_value = true;
        } else if (key.unsafe_is_equal("tid")) {
          ReadId(value, &event->tid);
        }
        break;
      case 'd':
        if (key.unsafe_is_equal("dur")) {
          event->has_dur = ReadTime(value, &event->dur_ns);
          if (!event->has_dur) event->bad_value = true;
        }
        break;
      case 'a':
        if (key.unsafe_is_equal("args") && WantArgs(*event)) {
          event->args_read = true;
          if (error_code e = ReadArgs(value, &event->args)) return e;
        }
        break;
      default:
        break;
    }
  }
  return SUCCESS;
}

}  // namespace sightline::kineto
