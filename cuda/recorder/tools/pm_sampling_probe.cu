// pm_sampling_probe: does CUPTI's PM sampling API (cupti_pmsampling.h) sample GPU metrics on this
// chip? Issue 16, "GPU metrics": the feasibility probe behind `sightline record --gpu-metrics`.
//
// On device 0 it: initialises the profiler, asks the chip name, lists the base metrics the host
// API knows for it (the sm__/dram__/gr__/pcie__/nvlrx__ ones), tries candidate metrics one by one,
// builds a single-pass config image, enables PM sampling, sets the config (interval, hardware
// buffer), starts, runs ~100 ms idle + ~200 ms of a memory-bound copy kernel + ~100 ms idle, stops,
// decodes, and evaluates every sample. Every CUPTI call's return code is printed with
// cuptiGetResultString.
//
//   pm_sampling_probe [interval_ns (default 100000 = 10 kHz)]
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sightline/gpu_check.h"

namespace {

// Prints "[cupti] <call> -> <code> <string>" for every CUPTI call; returns whether it succeeded.
bool Report(const char* call, CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  std::printf("[cupti] %-48s -> %d %s\n", call, static_cast<int>(r), s ? s : "?");
  std::fflush(stdout);
  return r == CUPTI_SUCCESS;
}
#define CALL(fn, params) Report(#fn, fn(&params))

__global__ void CopyKernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void GlobalTimer(unsigned long long* t) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  *t = v;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct HostObject {
  CUpti_Profiler_Host_Object* obj = nullptr;
  bool Init(const char* chip, const uint8_t* avail, bool quiet) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = chip;
    p.pCounterAvailabilityImage = avail;
    CUptiResult r = cuptiProfilerHostInitialize(&p);
    if (!quiet || r != CUPTI_SUCCESS) Report("cuptiProfilerHostInitialize", r);
    obj = p.pHostObject;
    return r == CUPTI_SUCCESS;
  }
  ~HostObject() {
    if (!obj) return;
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = obj;
    cuptiProfilerHostDeinitialize(&p);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t interval_ns = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  std::printf("pm_sampling_probe: device 0, requested interval %llu ns (%.1f Hz)\n",
              static_cast<unsigned long long>(interval_ns), 1e9 / interval_ns);
  SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, cudaSetDevice(0));
  SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, cudaFree(nullptr));  // create the context
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int drv = 0;
  cudaDriverGetVersion(&drv);
  uint32_t cupti_ver = 0;
  cuptiGetVersion(&cupti_ver);
  std::printf("device: %s (sm_%d%d), driver %d, CUPTI API version %u\n", prop.name, prop.major,
              prop.minor, drv, cupti_ver);

  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (!CALL(cuptiProfilerInitialize, init)) return 1;

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = 0;
  if (!CALL(cuptiDeviceGetChipName, chip)) return 1;
  std::printf("chip name: %s\n", chip.pChipName);

  // Counter availability image: size first, then the image.
  CUpti_PmSampling_GetCounterAvailability_Params av{
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
  av.deviceIndex = 0;
  if (!CALL(cuptiPmSamplingGetCounterAvailability, av)) return 1;
  std::vector<uint8_t> avail(av.counterAvailabilityImageSize);
  av.pCounterAvailabilityImage = avail.data();
  if (!CALL(cuptiPmSamplingGetCounterAvailability, av)) return 1;
  std::printf("counter availability image: %zu bytes\n", avail.size());

  // Metric enumeration through the host API.
  {
    HostObject h;
    if (!h.Init(chip.pChipName, avail.data(), false)) return 1;
    const char* types[] = {"COUNTER", "RATIO", "THROUGHPUT"};
    for (int t = 0; t < CUPTI_METRIC_TYPE__COUNT; ++t) {
      CUpti_Profiler_Host_GetBaseMetrics_Params bm{
          CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
      bm.pHostObject = h.obj;
      bm.metricType = static_cast<CUpti_MetricType>(t);
      if (!CALL(cuptiProfilerHostGetBaseMetrics, bm)) continue;
      std::printf("base metrics of type %s: %zu\n", types[t], bm.numMetrics);
      int shown = 0;
      for (size_t i = 0; i < bm.numMetrics && shown < 30; ++i) {
        std::string m = bm.ppMetricNames[i];
        for (const char* pre : {"sm__", "dram__", "gr__", "pcie__", "nvlrx__", "nvltx__"})
          if (m.rfind(pre, 0) == 0) {
            std::printf("  %s %s\n", types[t], m.c_str());
            ++shown;
            break;
          }
      }
    }
  }

  // Candidate metrics comparable to nsys's GPU metrics; each tried on its own.
  const char* candidates[] = {
      "gr__cycles_elapsed.max",
      "gr__cycles_active.avg",
      "sm__cycles_active.avg",
      "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "pcie__read_bytes.sum",
      "pcie__write_bytes.sum",
      "pcie__throughput.avg.pct_of_peak_sustained_elapsed",
      "nvlrx__bytes.sum",
      "nvltx__bytes.sum",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
  };
  std::vector<const char*> accepted;
  for (const char* m : candidates) {
    HostObject h;
    if (!h.Init(chip.pChipName, avail.data(), true)) return 1;
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = h.obj;
    add.ppMetricNames = &m;
    add.numMetrics = 1;
    CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add);
    std::string what = std::string("ConfigAddMetrics(") + m + ")";
    Report(what.c_str(), r);
    if (r == CUPTI_SUCCESS) accepted.push_back(m);
  }

  // Greedy single-pass selection: keep a metric only if the set with it still needs one pass.
  auto build = [&](const std::vector<const char*>& set, HostObject& h, std::vector<uint8_t>& img,
                   size_t& passes, bool quiet) -> bool {
    if (!h.Init(chip.pChipName, avail.data(), true)) return false;
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = h.obj;
    add.ppMetricNames = const_cast<const char**>(set.data());
    add.numMetrics = set.size();
    CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add);
    if (!quiet || r != CUPTI_SUCCESS) Report("cuptiProfilerHostConfigAddMetrics", r);
    if (r != CUPTI_SUCCESS) return false;
    CUpti_Profiler_Host_GetConfigImageSize_Params sz{
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    sz.pHostObject = h.obj;
    r = cuptiProfilerHostGetConfigImageSize(&sz);
    if (!quiet || r != CUPTI_SUCCESS) Report("cuptiProfilerHostGetConfigImageSize", r);
    img.assign(sz.configImageSize, 0);
    CUpti_Profiler_Host_GetConfigImage_Params ci{
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = h.obj;
    ci.configImageSize = img.size();
    ci.pConfigImage = img.data();
    r = cuptiProfilerHostGetConfigImage(&ci);
    if (!quiet || r != CUPTI_SUCCESS) Report("cuptiProfilerHostGetConfigImage", r);
    CUpti_Profiler_Host_GetNumOfPasses_Params np{
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = img.size();
    np.pConfigImage = img.data();
    r = cuptiProfilerHostGetNumOfPasses(&np);
    if (!quiet || r != CUPTI_SUCCESS) Report("cuptiProfilerHostGetNumOfPasses", r);
    passes = np.numOfPasses;
    return r == CUPTI_SUCCESS;
  };
  std::vector<const char*> chosen;
  for (const char* m : accepted) {
    std::vector<const char*> trial = chosen;
    trial.push_back(m);
    HostObject h;
    std::vector<uint8_t> img;
    size_t passes = 0;
    if (!build(trial, h, img, passes, true)) continue;
    std::printf("  + %-52s -> %zu pass(es), config %zu bytes: %s\n", m, passes, img.size(),
                passes <= 1 ? "kept" : "dropped");
    if (passes <= 1) chosen = trial;
  }
  accepted = chosen;
  std::vector<uint8_t> config;
  HostObject host;
  if (!accepted.empty()) {
    size_t passes = 0;
    if (!build(accepted, host, config, passes, false)) return 1;
    std::printf("config: %zu metrics, image %zu bytes, %zu pass(es)\n", accepted.size(),
                config.size(), passes);
  }
  if (accepted.empty()) {
    std::printf("RESULT: no metric accepted for PM sampling\n");
    return 1;
  }
  std::printf("metrics sampled:");
  for (const char* m : accepted) std::printf(" %s", m);
  std::printf("\n");

  // Enable, set config, counter data image.
  CUpti_PmSampling_Enable_Params en{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  en.deviceIndex = 0;
  if (!CALL(cuptiPmSamplingEnable, en)) {
    std::printf("RESULT: cuptiPmSamplingEnable failed\n");
    return 1;
  }
  CUpti_PmSampling_Object* pm = en.pPmSamplingObject;

  CUpti_PmSampling_SetConfig_Params sc{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  sc.pPmSamplingObject = pm;
  sc.configSize = config.size();
  sc.pConfig = config.data();
  sc.hardwareBufferSize = 512ull << 20;
  sc.samplingInterval = interval_ns;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (!CALL(cuptiPmSamplingSetConfig, sc)) {
    std::printf("RESULT: cuptiPmSamplingSetConfig failed\n");
    return 1;
  }

  const uint32_t max_samples = 20000;
  CUpti_PmSampling_GetCounterDataSize_Params ds{
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pPmSamplingObject = pm;
  ds.pMetricNames = accepted.data();
  ds.numMetrics = accepted.size();
  ds.maxSamples = max_samples;
  if (!CALL(cuptiPmSamplingGetCounterDataSize, ds)) return 1;
  std::vector<uint8_t> counter_data(ds.counterDataSize);
  std::printf("counter data image: %zu bytes for %u samples\n", counter_data.size(), max_samples);
  CUpti_PmSampling_CounterDataImage_Initialize_Params cdi{
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  cdi.pPmSamplingObject = pm;
  cdi.counterDataSize = counter_data.size();
  cdi.pCounterData = counter_data.data();
  if (!CALL(cuptiPmSamplingCounterDataImageInitialize, cdi)) return 1;

  // Workload buffers: 2 x 1 GiB.
  const size_t n = (1ull << 30) / sizeof(float4);
  float4 *in = nullptr, *out = nullptr;
  unsigned long long* stamps = nullptr;
  SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, cudaMalloc(&in, n * sizeof(float4)));
  SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, cudaMalloc(&out, n * sizeof(float4)));
  SIGHTLINE_GPU_CHECK_OR(sightline::gpu::ExitOnError, cudaMalloc(&stamps, 2 * sizeof(*stamps)));
  cudaMemset(in, 0, n * sizeof(float4));
  CopyKernel<<<prop.multiProcessorCount * 8, 256>>>(in, out, n);  // warm-up
  cudaDeviceSynchronize();

  CUpti_PmSampling_Start_Params st{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
  st.pPmSamplingObject = pm;
  if (!CALL(cuptiPmSamplingStart, st)) return 1;

  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // idle before
  GlobalTimer<<<1, 1>>>(&stamps[0]);
  const double t0 = Now();
  int launches = 0;
  while (Now() - t0 < 0.2) {
    for (int i = 0; i < 5; ++i, ++launches)
      CopyKernel<<<prop.multiProcessorCount * 8, 256>>>(in, out, n);
    cudaDeviceSynchronize();
  }
  GlobalTimer<<<1, 1>>>(&stamps[1]);
  SIGHTLINE_GPU_CHECK(cudaDeviceSynchronize());
  const double busy_s = Now() - t0;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // idle after

  CUpti_PmSampling_Stop_Params sp{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
  sp.pPmSamplingObject = pm;
  CALL(cuptiPmSamplingStop, sp);
  unsigned long long marks[2] = {0, 0};
  cudaMemcpy(marks, stamps, sizeof(marks), cudaMemcpyDeviceToHost);
  std::printf(
      "workload: %d copy launches of 2 GiB traffic in %.1f ms (%.0f GB/s); globaltimer "
      "busy window [%llu, %llu] ns\n",
      launches, busy_s * 1e3, launches * 2.0 * (1ull << 30) / busy_s / 1e9, marks[0], marks[1]);

  // Decode until the hardware buffer is drained or the image is full.
  for (int i = 0; i < 16; ++i) {
    CUpti_PmSampling_DecodeData_Params dd{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    dd.pPmSamplingObject = pm;
    dd.pCounterDataImage = counter_data.data();
    dd.counterDataImageSize = counter_data.size();
    bool ok = CALL(cuptiPmSamplingDecodeData, dd);
    std::printf("  decode: stopReason=%d overflow=%u\n", static_cast<int>(dd.decodeStopReason),
                dd.overflow);
    if (!ok || dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_OTHER) break;
  }

  CUpti_PmSampling_GetCounterDataInfo_Params info{
      CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  CALL(cuptiPmSamplingGetCounterDataInfo, info);
  std::printf("samples: total=%zu populated=%zu completed=%zu\n", info.numTotalSamples,
              info.numPopulatedSamples, info.numCompletedSamples);

  const size_t nm = accepted.size();
  std::vector<double> busy_sum(nm, 0), idle_sum(nm, 0);
  size_t busy_n = 0, idle_n = 0, failed = 0;
  uint64_t first_start = 0, last_end = 0;
  std::vector<double> deltas;
  uint64_t prev_start = 0;
  std::vector<double> values(nm);
  for (size_t s = 0; s < info.numCompletedSamples; ++s) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params si{
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    si.pPmSamplingObject = pm;
    si.pCounterDataImage = counter_data.data();
    si.counterDataImageSize = counter_data.size();
    si.sampleIndex = s;
    CUptiResult r1 = cuptiPmSamplingCounterDataGetSampleInfo(&si);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = host.obj;
    ev.pCounterDataImage = counter_data.data();
    ev.counterDataImageSize = counter_data.size();
    ev.rangeIndex = s;
    ev.ppMetricNames = accepted.data();
    ev.numMetrics = nm;
    ev.pMetricValues = values.data();
    CUptiResult r2 = cuptiProfilerHostEvaluateToGpuValues(&ev);
    if (s == 0) {
      Report("cuptiPmSamplingCounterDataGetSampleInfo[0]", r1);
      Report("cuptiProfilerHostEvaluateToGpuValues[0]", r2);
    }
    if (r1 != CUPTI_SUCCESS || r2 != CUPTI_SUCCESS) {
      if (failed++ < 3) {
        Report("  sample GetSampleInfo", r1);
        Report("  sample EvaluateToGpuValues", r2);
      }
      continue;
    }
    if (s == 0) {  // lead-in: from SetConfig/Start to the first trigger; shown, not counted
      std::printf("  sample     0 [%llu, %llu] lead-in (%.1f ms), not counted:",
                  static_cast<unsigned long long>(si.startTimestamp),
                  static_cast<unsigned long long>(si.endTimestamp),
                  (si.endTimestamp - si.startTimestamp) / 1e6);
      for (size_t m = 0; m < nm; ++m) std::printf(" %.4g", values[m]);
      std::printf("\n");
      prev_start = si.startTimestamp;
      continue;
    }
    if (s == 1) first_start = si.startTimestamp;
    if (s > 1) deltas.push_back(static_cast<double>(si.startTimestamp - prev_start));
    prev_start = si.startTimestamp;
    last_end = si.endTimestamp;
    const bool busy = si.startTimestamp >= marks[0] && si.endTimestamp <= marks[1];
    (busy ? busy_n : idle_n)++;
    for (size_t m = 0; m < nm; ++m) (busy ? busy_sum : idle_sum)[m] += values[m];
    // A readable slice: the first 5 samples, 5 around the start of the busy window, the last 3.
    static size_t busy_shown = 0;
    const bool show = s < 4 || s + 3 >= info.numCompletedSamples || (busy && busy_shown++ < 5);
    if (show) {
      std::printf("  sample %5zu [%llu, %llu] %s:", s,
                  static_cast<unsigned long long>(si.startTimestamp),
                  static_cast<unsigned long long>(si.endTimestamp), busy ? "busy" : "idle");
      for (size_t m = 0; m < nm; ++m) std::printf(" %.4g", values[m]);
      std::printf("\n");
    }
  }
  std::printf("evaluation failures: %zu\n", failed);
  if (!deltas.empty()) {
    std::sort(deltas.begin(), deltas.end());
    double mean = 0;
    for (double d : deltas) mean += d;
    mean /= deltas.size();
    std::printf(
        "sample interval achieved: mean %.0f ns, median %.0f ns, min %.0f, max %.0f "
        "(%.1f Hz); span %.1f ms\n",
        mean, deltas[deltas.size() / 2], deltas.front(), deltas.back(), 1e9 / mean,
        (last_end - first_start) / 1e6);
  }
  std::printf("samples inside the busy window: %zu, outside: %zu\n", busy_n, idle_n);
  std::printf("%-52s %14s %14s\n", "metric", "mean busy", "mean idle");
  for (size_t m = 0; m < nm; ++m)
    std::printf("%-52s %14.4g %14.4g\n", accepted[m], busy_n ? busy_sum[m] / busy_n : 0.0,
                idle_n ? idle_sum[m] / idle_n : 0.0);

  CUpti_PmSampling_Disable_Params dis{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
  dis.pPmSamplingObject = pm;
  CALL(cuptiPmSamplingDisable, dis);
  CUpti_Profiler_DeInitialize_Params deinit{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
  CALL(cuptiProfilerDeInitialize, deinit);
  cudaFree(in);
  cudaFree(out);
  cudaFree(stamps);
  std::printf("RESULT: %s\n", info.numCompletedSamples > 0 && failed == 0
                                  ? "PM sampling works: samples decoded and evaluated"
                                  : "PM sampling did not deliver evaluable samples");
  return 0;
}
