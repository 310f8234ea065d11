// libsightline_recorder.so entry points: InitializeInjection (CUDA_INJECTION64_PATH, called by the
// driver inside cuInit) and InitializeInjectionNvtx2 (NVTX_INJECTION64_PATH, called at the first
// NVTX call, which may come before CUDA's). Either one starts the recorder once: it reads the
// SIGHTLINE_RECORD_* settings (src/shared/recorder_env.h), opens the output file, registers
// the CUPTI buffer callbacks and enables activity now (capture range none) or between
// cu/cudaProfilerStart and Stop (capture range cudaProfilerApi; the driver launch calls stay
// enabled and the writer keeps those inside a window). A process whose rank is not
// selected returns at once and leaves CUDA and NVTX untouched.
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "graph_callbacks.h"
#include "injection_state.h"
#include "pm_sampler.h"
#include "shared/output_claim.h"
#include "shared/recorder_env.h"
#include "shared/recorder_format.h"
#include "sightline/gpu_check.h"
#include "skip_list.h"
#include "writer.h"

namespace sightline::recorder {

State& S() {
  static State* s = new State;  // never destroyed: atexit handlers and CUPTI threads use it late
  return *s;
}

void LogError(const gpu::GpuError& e) {
  std::fprintf(stderr, "sightline-recorder: %s failed: %s (%s:%d)\n", e.call, e.message, e.file,
               e.line);
}

int64_t CuptiNow() {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return static_cast<int64_t>(ts);
}

namespace {

// CUPTI fills a buffer on the application's threads and hands it over when full (or at the
// periodic flush). Large buffers make that hand-over rare: 16 MiB hold about 100k kernel/API
// records, several seconds of a launch-bound decode loop.
constexpr size_t kDefaultBufferBytes = 16 << 20;
constexpr size_t kMaxQueuedBuffers = 32;  // with 16 MiB buffers: 512 MiB before records are dropped
constexpr size_t kPrefaultedBuffers =
    2;  // touched at start so no page faults hit launching threads
constexpr uint32_t kFlushPeriodMs = 1000;  // completed buffers reach the file at least this often

int64_t ClockNs(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

const CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_MARKER,
};

// Calls that only query state, made many times per kernel by frameworks (PyTorch asks for the
// current device and the last error around every op). Leaving them out keeps the API table to calls
// that do work and trims the recorder's per-call cost; --all-api-calls keeps them.
const CUpti_CallbackId kRuntimeQueryCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_v12050,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetFuncBySymbol_v11000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
};
const CUpti_CallbackId kDriverQueryCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetStreamPriorityRange,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction,
    CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
};

// Driver API calls that launch GPU work. Recorded even without --driver-api: libraries such as
// cuBLAS launch their kernels with cuLaunchKernel(Ex), and without these records those kernels
// link to no call (a third of decode_loop's kernels). The writer drops the ones nested in a
// runtime call (cudaLaunchKernel -> cuLaunchKernel), which the runtime record already stands for.
const CUpti_CallbackId kDriverLaunchCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

void EnableActivities(bool enable) {
  for (CUpti_ActivityKind kind : kKinds) {
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER && !S().driver_api) continue;
    if (kind == CUPTI_ACTIVITY_KIND_MARKER && S().markers_whole_run) continue;
    if (std::find(S().skip.begin(), S().skip.end(), kind) != S().skip.end()) continue;
    if (enable) {
      CUPTI_CHECK(cuptiActivityEnable(kind));
    } else {
      CUPTI_CHECK(cuptiActivityDisable(kind));
    }
  }
  if (S().cuda_memory) {
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL}) {
      if (enable) {
        CUPTI_CHECK(cuptiActivityEnable(kind));
      } else {
        CUPTI_CHECK(cuptiActivityDisable(kind));
      }
    }
  }
  if (S().graph_trace_whole_run) {
    // GRAPH_TRACE stays as injection set it (State::graph_trace_whole_run).
  } else if (S().graph_sample > 0) {
    std::lock_guard<std::mutex> lock(S().graph_mu);
    S().whole_graphs_wanted = enable;
    ApplyGraphTraceLocked();
  } else if (S().graph_trace) {
    if (enable) {
      CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
    } else {
      CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
    }
  }
  if (enable && !S().query_calls && S().runtime_on) {
    for (CUpti_CallbackId cbid : kRuntimeQueryCalls) cuptiActivityEnableRuntimeApi(cbid, 0);
    if (S().driver_api) {
      for (CUpti_CallbackId cbid : kDriverQueryCalls) cuptiActivityEnableDriverApi(cbid, 0);
    }
  }
}

// Of the driver API, the launch calls alone (without --driver-api), enabled once at injection and
// never switched: CUPTI 13.0 accepts cuptiActivityEnableDriverApi later (at a capture window's
// start) but then emits no records, which left cuBLAS's cuLaunchKernelEx kernels without a
// launching call. With a capture range the writer keeps those that start inside a window
// (Writer::WindowOpened, capture_window_gate.h); the kinds are still switched at the windows'
// edges.
void EnableDriverLaunchCalls() {
  for (CUpti_CallbackId cbid : kDriverLaunchCalls) cuptiActivityEnableDriverApi(cbid, 1);
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = S().writer->AcquireBuffer(size);
  if (*buffer == nullptr) *size = 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                              size_t valid_size) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    S().writer->AddCuptiDropped(dropped);
  }
  S().writer->Post(buffer, valid_size);
}

void OpenWindow() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.window_mu);
  if (s.window_open) return;
  const bool allowed =
      s.repeat < 0 || (s.repeat == 0 ? s.windows < 1 : s.windows < static_cast<uint32_t>(s.repeat));
  if (!allowed) return;
  EnableActivities(true);
  if (s.sampler != nullptr) s.sampler->SetSampling(true);
  s.window_start_ns = CuptiNow();
  s.writer->WindowOpened(s.window_start_ns);
  s.window_open.store(true, std::memory_order_release);
}

void CloseWindow() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.window_mu);
  if (!s.window_open) return;
  recfmt::CaptureWindowBody w{};
  w.start_ns = s.window_start_ns;
  w.end_ns = CuptiNow();
  w.index = s.windows;
  s.window_open.store(false, std::memory_order_release);
  s.writer->WindowClosed(w.end_ns);
  EnableActivities(false);
  if (s.sampler != nullptr) s.sampler->SetSampling(false);
  ++s.windows;
  s.writer->PostRecord(recfmt::RecordType::kCaptureWindow, &w, sizeof w);
}

// Profiler start opens the window once the call has returned; stop closes it on entry, so the
// start/stop calls themselves are never part of a window. cudaProfilerStart calls cuProfilerStart;
// both are watched, and the window state makes the second one a no-op.
// With --gpu-metrics, each new context's device is set up for sampling (once per device). Graph
// nodes created or cloned are recorded (RecordGraphNode).
void CUPTIAPI ProfilerCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
        cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
      RecordGraphNode(cbid, static_cast<const CUpti_ResourceData*>(data));
      return;
    }
    if (cbid == CUPTI_CBID_RESOURCE_GRAPH_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPH_CLONED ||
        cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
      RecordGraphEvent(cbid, static_cast<const CUpti_ResourceData*>(data));
      return;
    }
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && S().sampler != nullptr) {
      const auto* res = static_cast<const CUpti_ResourceData*>(data);
      uint32_t device = 0;
      if (CUPTI_CHECK(cuptiGetDeviceId(res->context, &device))) {
        S().sampler->AddDevice(device, res->context);
      }
    }
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && S().sampler != nullptr) {
      S().sampler->ContextDestroying(static_cast<const CUpti_ResourceData*>(data)->context);
    }
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (S().graph_sample > 0 && IsGraphLaunch(domain, cbid)) {
    SampledGraphLaunch(info);
    return;
  }
  const bool start =
      (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
      (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
  const bool stop =
      (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
      (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  if (start && info->callbackSite == CUPTI_API_EXIT) OpenWindow();
  if (stop && info->callbackSite == CUPTI_API_ENTER) CloseWindow();
}

// SIGHTLINE_RECORD_DEBUG=1: the steps of the exit on stderr (where a hang is).
void DebugStep(const char* what) {
  static const bool on = [] {
    const char* v = std::getenv("SIGHTLINE_RECORD_DEBUG");
    return v != nullptr && *v == '1';
  }();
  if (on) std::fprintf(stderr, "sightline-recorder: exit: %s\n", what);
}

void AtExit() {
  State& s = S();
  if (!s.active) return;
  DebugStep("closing the capture window");
  CloseWindow();
  DebugStep("finishing the GPU metrics");
  if (s.sampler != nullptr) s.sampler->Finish();
  DebugStep("flushing CUPTI's buffers");
  CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  DebugStep("finishing the file");
  s.writer->Finish(s.windows);
  DebugStep("done");
  s.active = false;
}

size_t EnvSize(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return (*end == '\0' && n >= (64u << 10) && n <= (1ull << 30)) ? static_cast<size_t>(n)
                                                                 : fallback;
}

std::string ReadLink(const char* path) {
  char buf[4096];
  const ssize_t n = readlink(path, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void StartOnce() {
  State& s = S();
  const int rank = recenv::DetectRank();
  if (const char* ranks = std::getenv(recenv::kRanksEnv); ranks != nullptr && *ranks != '\0') {
    std::vector<recenv::RankRange> list;
    const std::string err = recenv::ParseRankList(ranks, &list);
    if (!err.empty()) {
      std::fprintf(stderr, "sightline-recorder: %s=%s: %s; not recording\n", recenv::kRanksEnv,
                   ranks, err.c_str());
      return;
    }
    if (!recenv::RankSelected(list, rank)) return;  // not ours to record: touch nothing
  }
  const char* capture = std::getenv(recenv::kCaptureRangeEnv);
  s.profiler_api = capture != nullptr && std::strcmp(capture, "cudaProfilerApi") == 0;
  if (capture != nullptr && *capture != '\0' && !s.profiler_api && std::strcmp(capture, "none")) {
    std::fprintf(stderr, "sightline-recorder: unknown capture range '%s'; recording everything\n",
                 capture);
  }
  if (const char* end = std::getenv(recenv::kCaptureEndEnv); end != nullptr && *end != '\0') {
    const std::string err = recenv::ParseCaptureRangeEnd(end, &s.repeat);
    if (!err.empty()) {
      std::fprintf(stderr, "sightline-recorder: %s; using stop\n", err.c_str());
      s.repeat = 0;
    }
  }
  const char* driver = std::getenv(recenv::kDriverApiEnv);
  s.driver_api = driver != nullptr && std::strcmp(driver, "1") == 0;
  const char* query = std::getenv(recenv::kQueryCallsEnv);
  s.query_calls = query != nullptr && std::strcmp(query, "1") == 0;
  if (const char* skip = std::getenv(recenv::kSkipEnv); skip != nullptr && *skip != '\0') {
    ParseSkip(skip, &s.skip, &s.graph_nodes, &s.graph_events, &s.driver_launches);
    std::fprintf(stderr, "sightline-recorder: %s=%s: diagnostic run, those records are left out\n",
                 recenv::kSkipEnv, skip);
  }

  const char* pattern = std::getenv(recenv::kOutputEnv);
  const std::string expanded = recenv::ExpandOutputPattern(
      pattern && *pattern ? pattern : recenv::kDefaultOutputPattern, getpid(), rank);
  // Claimed in the run's manifest before the file is created: a name another process of the run
  // writes (a fixed -o reached by torch.compile's workers) becomes this process's own.
  int64_t taken_by = 0;
  const std::string path =
      recenv::ClaimOutput(std::getenv(recenv::kManifestEnv), expanded, getpid(), &taken_by);
  if (taken_by != 0) {
    std::fprintf(stderr,
                 "sightline-recorder: %s is written by process %lld of this run; process %d "
                 "writes %s\n",
                 expanded.c_str(), static_cast<long long>(taken_by), static_cast<int>(getpid()),
                 path.c_str());
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "sightline-recorder: cannot create %s: %s; not recording\n", path.c_str(),
                 std::strerror(errno));
    return;
  }

  s.writer = new Writer(fd, EnvSize(recenv::kBufferBytesEnv, kDefaultBufferBytes),
                        kMaxQueuedBuffers, kPrefaultedBuffers);
  s.runtime_on =
      std::find(s.skip.begin(), s.skip.end(), CUPTI_ACTIVITY_KIND_RUNTIME) == s.skip.end();
  s.only_driver_launches = !s.driver_api && s.runtime_on && s.driver_launches;
  s.writer->DropNestedDriverLaunches(s.only_driver_launches);
  s.writer->GateDriverRecordsByWindow(s.only_driver_launches && s.profiler_api);
  if (const char* v = std::getenv(recenv::kGraphTraceEnv); v != nullptr && *v != '\0') {
    const std::string err = recenv::ParseGraphTrace(v, &s.graph_trace, &s.graph_sample);
    if (!err.empty()) {
      std::fprintf(stderr, "sightline-recorder: %s; tracing graphs node by node\n", err.c_str());
      s.graph_trace = false;
      s.graph_sample = 0;
    }
  }
  if (s.graph_trace && s.graph_sample == 0) s.graph_nodes = false;
  s.graph_trace_whole_run = s.profiler_api && (s.graph_trace || s.graph_sample > 0);
  s.writer->GateGraphRecordsByWindow(s.graph_trace_whole_run);
  s.markers_whole_run =
      s.profiler_api && s.graph_nodes &&
      std::find(s.skip.begin(), s.skip.end(), CUPTI_ACTIVITY_KIND_MARKER) == s.skip.end();
  s.writer->GateRangesByWindow(s.markers_whole_run);
  CUPTI_CHECK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  // Latency timestamps (queued/submitted times of kernels) cost extra work per launch and nothing
  // here reads them; off is CUPTI's default, made explicit so no environment turns it on.
  CUPTI_CHECK(cuptiActivityEnableLatencyTimestamps(0));
  if (const char* v = std::getenv(recenv::kCudaMemoryEnv); v != nullptr) {
    s.cuda_memory = std::strcmp(v, "1") == 0;
  }
  if (!CUPTI_CHECK(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted))) {
    std::fprintf(stderr, "sightline-recorder: CUPTI cannot trace this process; not recording\n");
    s.writer->Finish(0);
    return;
  }

  s.pid = static_cast<uint32_t>(getpid());
  recfmt::ProcessBody p{};
  p.pid = getpid();
  p.start_cupti_ns = CuptiNow();
  p.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  p.start_monotonic_ns = ClockNs(CLOCK_MONOTONIC);
  p.rank = rank;
  p.world_size = recenv::DetectWorldSize();
  p.capture_range = s.profiler_api ? 1 : 0;
  p.capture_repeat = s.repeat;
  uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  p.cupti_version = cupti_version;
  p.graph_trace_sample = s.graph_sample;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  s.writer->PostRecord(
      recfmt::RecordType::kProcess, &p, sizeof p,
      {{offsetof(recfmt::ProcessBody, executable_string), ReadLink("/proc/self/exe")},
       {offsetof(recfmt::ProcessBody, hostname_string), host}});
  s.writer->Start();

  // One record per device, whatever the capture range (used for device names and limits).
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
  // Which shared object asked for each allocation (libnccl.so, libc10_cuda.so, the program):
  // costs a lookup per allocation, none per kernel.
  if (s.cuda_memory) CUPTI_CHECK(cuptiActivityEnableAllocationSource(1));
  uint64_t metrics_hz = 0;
  if (const char* v = std::getenv(recenv::kGpuMetricsEnv); v != nullptr && *v != '\0') {
    metrics_hz = std::strtoull(v, nullptr, 10);
  }
  const bool subscribed =
      (s.profiler_api || metrics_hz > 0 || s.graph_nodes || s.graph_events || s.graph_sample > 0) &&
      CUPTI_CHECK(cuptiSubscribe(&s.subscriber, ProfilerCallback, nullptr));
  if (subscribed && s.graph_sample > 0) {
    for (CUpti_CallbackId cbid : {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000}) {
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid));
    }
    for (CUpti_CallbackId cbid :
         {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz}) {
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid));
    }
  } else if (s.graph_sample > 0) {
    s.graph_sample = 0;  // no callbacks: whole graphs throughout
    std::fprintf(stderr,
                 "sightline-recorder: sampled graph tracing needs CUPTI callbacks; "
                 "tracing whole graphs\n");
  }
  // Graph nodes, from the start and whatever the capture range (RecordGraphNode).
  if (subscribed && s.graph_nodes) {
    CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
    CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED));
  }
  // Graphs created, cloned and instantiated, from the start, in every mode (RecordGraphEvent).
  if (subscribed && s.graph_events) {
    for (CUpti_CallbackId cbid :
         {CUPTI_CBID_RESOURCE_GRAPH_CREATED, CUPTI_CBID_RESOURCE_GRAPH_CLONED,
          CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED}) {
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid));
    }
  }
  if (metrics_hz > 0 && subscribed) {
    s.sampler = new PmSampler(s.writer, metrics_hz);  // never destroyed, like the writer
    if (!s.profiler_api) s.sampler->SetSampling(true);
    CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  }
  if (s.profiler_api) {
    if (subscribed) {
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000));
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                      CUPTI_DRIVER_TRACE_CBID_cuProfilerStart));
      CUPTI_CHECK(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                      CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
    }
  } else {
    EnableActivities(true);
  }
  if (s.only_driver_launches) EnableDriverLaunchCalls();
  if (s.graph_trace_whole_run) {
    std::lock_guard<std::mutex> lock(s.graph_mu);
    s.whole_graphs_wanted = true;
    ApplyGraphTraceLocked();
  }
  if (s.markers_whole_run) CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER));
  // Completed buffers reach the file at least every second, so a crash loses little.
  CUPTI_CHECK(cuptiActivityFlushPeriod(kFlushPeriodMs));
  s.active = true;
  std::atexit(AtExit);
}

bool Start() {
  std::call_once(S().once, StartOnce);
  return S().active;
}

}  // namespace
}  // namespace sightline::recorder

extern "C" {

// Called by the CUDA driver (CUDA_INJECTION64_PATH). Returns 1 on success, as the driver expects.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  sightline::recorder::Start();
  return 1;
}

// Called by NVTX (NVTX_INJECTION64_PATH). CUPTI implements the NVTX side; this forwards to it after
// starting the recorder. Returning 0 leaves NVTX calls as no-ops (not recording in this process).
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  if (!sightline::recorder::Start()) return 0;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetTimestamp), &info) == 0 ||
      info.dli_fname == nullptr) {
    return 0;
  }
  void* cupti = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (cupti == nullptr) return 0;
  using InitFn = int (*)(const void*);
  auto init = reinterpret_cast<InitFn>(dlsym(cupti, "InitializeInjectionNvtx2"));
  if (init == nullptr) {
    std::fprintf(stderr, "sightline-recorder: this CUPTI has no NVTX support; NVTX not recorded\n");
    return 0;
  }
  return init(get_export_table);
}

}  // extern "C"
