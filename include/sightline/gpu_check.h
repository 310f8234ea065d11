// One way to check CUDA runtime, CUDA driver, NCCL and CUPTI calls: the failure keeps the call's
// text, the library's error string and file:line, and the caller decides what a failure does (log
// and go on, return, exit). Header-only; needs only the standard library and the CUDA toolkit's
// headers. Compiles with nvcc and any C++17 host compiler. It supports each API whose header is on
// the include path (cuda_runtime_api.h, cuda.h, nccl.h, cupti.h) and includes those headers itself,
// so include order does not matter; checking a call of an API whose header is missing does not
// compile.
//
//   SIGHTLINE_GPU_CHECK(cudaMalloc(&p, n));                  // on failure: one line on stderr
//   if (!SIGHTLINE_GPU_CHECK(cuptiSubscribe(...))) return;   // every form is true on success
//   SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, ncclCommInitRank(...));
//   SIGHTLINE_GPU_CHECK_OR([&](const sightline::gpu::GpuError& e) { MyFatal(e.Describe()); },
//                          cudaStreamSynchronize(stream));
//
// The line printed by PrintError: "cudaMalloc(&p, n) failed: out of memory (file.cc:12)".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#endif
#if __has_include(<cuda.h>)
#include <cuda.h>
#endif
#if __has_include(<nccl.h>)
#include <nccl.h>
#endif
#if __has_include(<cupti.h>)
#include <cupti.h>
#endif

namespace sightline::gpu {

// A failed call. All pointers are to static text or to the library's own strings.
struct GpuError {
  const char* api;      // "CUDA runtime", "CUDA driver", "NCCL", "cuBLAS" or "CUPTI"
  int code;             // the library's error code
  const char* message;  // the library's error string
  const char* call;     // the call as written in the source
  const char* file;
  int line;

  std::string Describe() const {
    return std::string(call) + " failed: " + message + " (" + file + ":" + std::to_string(line) +
           ")";
  }
};

// Handlers a caller can pass to SIGHTLINE_GPU_CHECK_OR (any callable taking const GpuError& works).
inline void PrintError(const GpuError& e) {
  std::fprintf(stderr, "%s failed: %s (%s:%d)\n", e.call, e.message, e.file, e.line);
}
[[noreturn]] inline void ExitOnError(const GpuError& e) {
  PrintError(e);
  std::exit(1);
}

// Per API: whether a result is success, and its name and message. One overload per result type
// (they are distinct enums), defined when that API's header was found.
#if defined(CUDART_VERSION)  // cuda_runtime_api.h
inline bool Succeeded(cudaError_t r) { return r == cudaSuccess; }
inline const char* ApiName(cudaError_t) { return "CUDA runtime"; }
inline const char* ErrorMessage(cudaError_t r) { return cudaGetErrorString(r); }
#endif

#if defined(__cuda_cuda_h__)  // cuda.h
inline bool Succeeded(CUresult r) { return r == CUDA_SUCCESS; }
inline const char* ApiName(CUresult) { return "CUDA driver"; }
inline const char* ErrorMessage(CUresult r) {
  const char* msg = nullptr;
  return cuGetErrorString(r, &msg) == CUDA_SUCCESS && msg != nullptr ? msg : "unknown CUDA error";
}
#endif

#if defined(NCCL_MAJOR)  // nccl.h
inline bool Succeeded(ncclResult_t r) { return r == ncclSuccess; }
inline const char* ApiName(ncclResult_t) { return "NCCL"; }
inline const char* ErrorMessage(ncclResult_t r) { return ncclGetErrorString(r); }
#endif

#if defined(CUBLAS_VER_MAJOR)  // cublas_api.h (cublas_v2.h, cublasLt.h), when included before this
                               // file
inline bool Succeeded(cublasStatus_t r) { return r == CUBLAS_STATUS_SUCCESS; }
inline const char* ApiName(cublasStatus_t) { return "cuBLAS"; }
inline const char* ErrorMessage(cublasStatus_t r) { return cublasGetStatusString(r); }
#endif

#if defined(CUPTI_API_VERSION)  // cupti.h
inline bool Succeeded(CUptiResult r) { return r == CUPTI_SUCCESS; }
inline const char* ApiName(CUptiResult) { return "CUPTI"; }
inline const char* ErrorMessage(CUptiResult r) {
  const char* msg = nullptr;
  return cuptiGetResultString(r, &msg) == CUPTI_SUCCESS && msg != nullptr ? msg
                                                                          : "unknown CUPTI error";
}
#endif

// The mechanism behind the macros: true on success; on failure calls on_error(GpuError) and, if
// that returns, gives false.
template <typename Result, typename OnError>
inline bool CheckCall(Result result, const char* call, const char* file, int line,
                      OnError&& on_error) {
  if (Succeeded(result)) return true;
  std::forward<OnError>(on_error)(
      GpuError{ApiName(result), static_cast<int>(result), ErrorMessage(result), call, file, line});
  return false;
}

}  // namespace sightline::gpu

// The call is the last argument and may contain commas (templates, braces).
#define SIGHTLINE_GPU_CHECK(...)                                               \
  ::sightline::gpu::CheckCall((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__, \
                              ::sightline::gpu::PrintError)
#define SIGHTLINE_GPU_CHECK_OR(on_error, ...) \
  ::sightline::gpu::CheckCall((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__, on_error)
