// The few CUDA driver entry points the instrument library uses (cuProfilerStart/Stop,
// cuCtxGetCurrent, cuMemGetInfo), loaded with dlopen("libcuda.so.1") on first use, so the library
// has no link-time CUDA dependency and works beside an application's static cudart. Without a
// driver every call returns false after one note on stderr.
#pragma once

#include <cstdint>
#include <string>

namespace sightline::instrument {

class CudaDriver {
 public:
  // The process-wide instance; loads nothing until a method is called.
  static CudaDriver& Get();

  // cuProfilerStart()/cuProfilerStop() on the calling thread's current context. False (with one
  // note on stderr per kind of failure) when the driver is missing or the call fails.
  bool ProfilerStart();
  bool ProfilerStop();
  // Device memory in use (total - free) of the current context's device. False when no context is
  // current or the driver is missing (no note: the log simply leaves the field out).
  bool GpuMemoryUsed(int64_t* used_bytes);

  // Tests: load `library` instead of libcuda.so.1 from now on (forgets the loaded one and the notes
  // already given).
  void ResetForTesting(const std::string& library);

 private:
  CudaDriver() = default;
  bool Load();

  using CUresult = int;
  std::string library_ = "libcuda.so.1";
  bool tried_ = false;
  bool loaded_ = false;
  void* handle_ = nullptr;
  CUresult (*profiler_start_)() = nullptr;
  CUresult (*profiler_stop_)() = nullptr;
  CUresult (*ctx_get_current_)(void**) = nullptr;
  CUresult (*mem_get_info_)(size_t*, size_t*) = nullptr;
  bool start_failure_reported_ = false;
  bool stop_failure_reported_ = false;
};

}  // namespace sightline::instrument
