#include "importers/kineto/kineto_read_metadata.h"

#include <limits>
#include <utility>

#include "importers/kineto/kineto_json.h"
#include "importers/kineto/kineto_numbers.h"

namespace sightline::kineto {

using simdjson::error_code;
using simdjson::SUCCESS;

namespace {

template <typename T>
void ReadIntInto(sj::value& v, T* out) {
  int64_t x;
  if (ReadInt(v, &x) && x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max()) {
    *out = static_cast<T>(x);
  }
}

error_code ReadDevice(sj::value& v, TopLevelInfo* info) {
  sj::object object;
  if (v.get_object().get(object) != SUCCESS) {
    ++info->invalid_devices;
    return SUCCESS;
  }
  DeviceInfo d;
  for (auto field_result : object) {
    sj::field field;
    if (error_code e = std::move(field_result).get(field)) return e;
    const sj::raw_json_string k = field.key();
    sj::value& value = field.value();
    if (k.unsafe_is_equal("id")) {
      ReadIntInto(value, &d.id);
    } else if (k.unsafe_is_equal("name")) {
      std::string_view name;
      if (ReadString(value, &name)) d.name = std::string(name);
    } else if (k.unsafe_is_equal("numSms")) {
      ReadIntInto(value, &d.sm_count);
    } else if (k.unsafe_is_equal("computeMajor")) {
      ReadIntInto(value, &d.cc_major);
    } else if (k.unsafe_is_equal("computeMinor")) {
      ReadIntInto(value, &d.cc_minor);
    } else if (k.unsafe_is_equal("totalGlobalMem")) {
      ReadIntInto(value, &d.total_memory_bytes);
    } else if (k.unsafe_is_equal("maxThreadsPerMultiprocessor")) {
      ReadIntInto(value, &d.max_threads_per_sm);
    } else if (k.unsafe_is_equal("regsPerMultiprocessor")) {
      ReadIntInto(value, &d.registers_per_sm);
    } else if (k.unsafe_is_equal("sharedMemPerMultiprocessor") ||
               k.unsafe_is_equal("maxSharedMemoryPerMultiProcessor")) {
      ReadIntInto(value, &d.shared_memory_per_sm_bytes);
    } else if (k.unsafe_is_equal("sharedMemPerBlockOptin")) {
      ReadIntInto(value, &d.shared_memory_per_block_optin_bytes);
    }
  }
  if (d.id < 0) {
    ++info->invalid_devices;
    return SUCCESS;
  }
  info->devices.push_back(std::move(d));
  return SUCCESS;
}

error_code ReadDeviceProperties(sj::value& v, TopLevelInfo* info) {
  sj::array array;
  if (v.get_array().get(array) != SUCCESS) return SUCCESS;
  for (auto element : array) {
    sj::value device;
    if (error_code e = std::move(element).get(device)) return e;
    if (error_code e = ReadDevice(device, info)) return e;
  }
  return SUCCESS;
}

error_code ReadDistributedInfo(sj::value& v, TopLevelInfo* info) {
  sj::object object;
  if (v.get_object().get(object) != SUCCESS) return SUCCESS;
  for (auto field_result : object) {
    sj::field field;
    if (error_code e = std::move(field_result).get(field)) return e;
    const sj::raw_json_string k = field.key();
    if (k.unsafe_is_equal("rank")) {
      ReadIntInto(field.value(), &info->rank);
    } else if (k.unsafe_is_equal("world_size")) {
      ReadIntInto(field.value(), &info->world_size);
    }
  }
  return SUCCESS;
}

}  // namespace

error_code ReadTopLevelField(sj::raw_json_string key, sj::value& value, TopLevelInfo* info) {
  if (key.unsafe_is_equal("deviceProperties")) return ReadDeviceProperties(value, info);
  if (key.unsafe_is_equal("distributedInfo")) return ReadDistributedInfo(value, info);
  if (key.unsafe_is_equal("baseTimeNanoseconds")) {
    info->has_base_time = ReadInt(value, &info->base_time_ns);
  } else if (key.unsafe_is_equal("schemaVersion")) {
    std::string_view s;
    int64_t v;
    if (ReadString(value, &s)) {
      info->schema_version = std::string(s);
    } else if (ReadInt(value, &v)) {
      info->schema_version = std::to_string(v);
    }
  } else if (key.unsafe_is_equal("cuda_runtime_version")) {
    ReadInt(value, &info->cuda_runtime_version);
  } else if (key.unsafe_is_equal("cuda_driver_version")) {
    ReadInt(value, &info->cuda_driver_version);
  } else if (key.unsafe_is_equal("cupti_version")) {
    ReadInt(value, &info->cupti_version);
  }
  return SUCCESS;
}

}  // namespace sightline::kineto
