#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>

namespace sightline::instrument {

CudaDriver& CudaDriver::Get() {
  static CudaDriver* driver = new CudaDriver();  // never destroyed: used from atexit handlers
  return *driver;
}

bool CudaDriver::Load() {
  if (tried_) return loaded_;
  tried_ = true;
  handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr,
                 "sightline: cannot load the CUDA driver (%s): %s; no profiling window and no GPU "
                 "memory in the iteration log\n",
                 library_.c_str(), why ? why : "unknown error");
    return false;
  }
  profiler_start_ = reinterpret_cast<CUresult (*)()>(dlsym(handle_, "cuProfilerStart"));
  profiler_stop_ = reinterpret_cast<CUresult (*)()>(dlsym(handle_, "cuProfilerStop"));
  ctx_get_current_ = reinterpret_cast<CUresult (*)(void**)>(dlsym(handle_, "cuCtxGetCurrent"));
  // The _v2 entry point takes size_t; the plain name is the old 32-bit one.
  mem_get_info_ =
      reinterpret_cast<CUresult (*)(size_t*, size_t*)>(dlsym(handle_, "cuMemGetInfo_v2"));
  if (profiler_start_ == nullptr || profiler_stop_ == nullptr) {
    std::fprintf(stderr,
                 "sightline: %s has no cuProfilerStart/cuProfilerStop; the profiling window is "
                 "off\n",
                 library_.c_str());
    return false;
  }
  loaded_ = true;
  return true;
}

bool CudaDriver::ProfilerStart() {
  if (!Load()) return false;
  const CUresult rc = profiler_start_();
  if (rc != 0 && !start_failure_reported_) {
    start_failure_reported_ = true;
    std::fprintf(stderr,
                 "sightline: cuProfilerStart failed with CUDA error %d (is a CUDA context current "
                 "on the thread that calls IterationBegin?)\n",
                 rc);
  }
  return rc == 0;
}

bool CudaDriver::ProfilerStop() {
  if (!Load()) return false;
  const CUresult rc = profiler_stop_();
  if (rc != 0 && !stop_failure_reported_) {
    stop_failure_reported_ = true;
    std::fprintf(stderr, "sightline: cuProfilerStop failed with CUDA error %d\n", rc);
  }
  return rc == 0;
}

bool CudaDriver::GpuMemoryUsed(int64_t* used_bytes) {
  if (!Load() || ctx_get_current_ == nullptr || mem_get_info_ == nullptr) return false;
  void* context = nullptr;
  if (ctx_get_current_(&context) != 0 || context == nullptr) return false;
  size_t free_bytes = 0, total_bytes = 0;
  if (mem_get_info_(&free_bytes, &total_bytes) != 0) return false;
  *used_bytes = static_cast<int64_t>(total_bytes - free_bytes);
  return true;
}

void CudaDriver::ResetForTesting(const std::string& library) {
  if (handle_ != nullptr) dlclose(handle_);
  *this = CudaDriver();
  library_ = library;
}

}  // namespace sightline::instrument
