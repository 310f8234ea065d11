#include "model/trace.h"

#include <algorithm>

namespace sightline {

const char* MemOpKindName(MemOpKind kind) {
  switch (kind) {
    case MemOpKind::kHtoD:
      return "HtoD";
    case MemOpKind::kDtoH:
      return "DtoH";
    case MemOpKind::kDtoD:
      return "DtoD";
    case MemOpKind::kHtoH:
      return "HtoH";
    case MemOpKind::kPtoP:
      return "PtoP";
    case MemOpKind::kMemset:
      return "memset";
    case MemOpKind::kOther:
      return "other";
  }
  return "other";
}

const char* MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kUnknown:
      return "unknown";
    case MemoryKind::kPageable:
      return "pageable";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kArray:
      return "array";
    case MemoryKind::kManaged:
      return "managed";
  }
  return "unknown";
}

const char* ApiClassName(ApiClass c) {
  switch (c) {
    case ApiClass::kLaunch:
      return "launch";
    case ApiClass::kSync:
      return "synchronize";
    case ApiClass::kMemcpy:
      return "memcpy";
    case ApiClass::kMemset:
      return "memset";
    case ApiClass::kAlloc:
      return "alloc";
    case ApiClass::kGraph:
      return "graph";
    case ApiClass::kOther:
      return "other";
  }
  return "other";
}

ApiClass ClassifyApiName(std::string_view n) {
  auto has = [&](std::string_view s) { return n.find(s) != std::string_view::npos; };
  // Only calls that block the host count as synchronization; cudaStreamWaitEvent orders GPU work
  // without blocking the host, so it stays "other".
  if (has("Synchronize")) return ApiClass::kSync;
  if (has("LaunchKernel") || has("LaunchCooperativeKernel") || n == "cuLaunchGrid" ||
      has("cudaLaunch") || has("cuLaunch") || has("GraphLaunch")) {
    return ApiClass::kLaunch;
  }
  if (has("Memcpy")) return ApiClass::kMemcpy;
  if (has("Memset")) return ApiClass::kMemset;
  if (has("Malloc") || has("Free") || has("MemAlloc") || has("MemFree") || has("MemCreate") ||
      has("HostAlloc") || has("HostRegister")) {
    return ApiClass::kAlloc;
  }
  if (has("Graph")) return ApiClass::kGraph;
  return ApiClass::kOther;
}

const char* RangeKindName(RangeKind kind) {
  switch (kind) {
    case RangeKind::kNvtxPushPop:
      return "nvtx";
    case RangeKind::kNvtxStartEnd:
      return "nvtx_startend";
    case RangeKind::kUserAnnotation:
      return "annotation";
    case RangeKind::kCpuOp:
      return "cpu_op";
    case RangeKind::kPythonFunction:
      return "python";
  }
  return "nvtx";
}

const DeviceInfo* Trace::FindDevice(int32_t id) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const DeviceInfo& d, int32_t v) { return d.id < v; });
  if (it == devices.end() || it->id != id) return nullptr;
  return &*it;
}

const char* ThreadRoleName(ThreadRole role) {
  switch (role) {
    case ThreadRole::kLaunching:
      return "launching";
    case ThreadRole::kProfiler:
      return "profiler";
    case ThreadRole::kOther:
      return "other";
  }
  return "other";
}

bool IsProfilerThreadName(std::string_view name) {
  // nsys's Python sampler and its other helper threads.
  return name.starts_with("NSys") || name.starts_with("nsys") ||
         name.find("PySampling") != std::string_view::npos;
}

}  // namespace sightline
