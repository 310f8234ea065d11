#include "pm_sampler.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "shared/recorder_format.h"

namespace sightline::recorder {
namespace {

// The metrics Nsight Systems samples on Hopper (its "General Metrics for NVIDIA GH100" set, as the
// GpuMetricsConfig of a 2025.3 export lists them), under nsys's names so that every analysis reads
// a recording and an nsys export alike. Each is kept only if the chip knows it and the set still
// fits one pass (PM sampling refuses multi-pass configurations); values are multiplied into the
// unit of the name (clocks: Hz -> MHz; the warps-per-cycle sub-metric x 0.5, as nsys does).
struct MetricSpec {
  const char* name;
  const char* cupti;
  double multiplier;
};
constexpr MetricSpec kMetrics[] = {
    {"GPC Clock Frequency [MHz]", "gpc__cycles_elapsed.avg.per_second", 1e-6},
    {"SYS Clock Frequency [MHz]", "sys__cycles_elapsed.avg.per_second", 1e-6},
    {"GR Active [Throughput %]", "gr__cycles_active.sum.pct_of_peak_sustained_elapsed", 1},
    {"SMs Active [Throughput %]", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 1},
    {"SM Issue [Throughput %]", "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed", 1},
    {"Tensor Active [Throughput %]",
     "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", 1},
    // nsys reads the warps in flight per TPC (tpc__warps_active_shader_cs_realtime); through
    // CUPTI's PM sampling on an H200 that metric read 0 throughout, so the SM-level count stands
    // in (on a copy kernel: 89.9% here against nsys's 90.2%).
    {"Compute Warps in Flight [Throughput %]", "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
     1},
    {"DRAM Read Bandwidth [Throughput %]",
     "dram__read_throughput.avg.pct_of_peak_sustained_elapsed", 1},
    {"DRAM Write Bandwidth [Throughput %]",
     "dram__write_throughput.avg.pct_of_peak_sustained_elapsed", 1},
    {"PCIe RX Throughput [Throughput %]", "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", 1},
    {"PCIe TX Throughput [Throughput %]", "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", 1},
    {"NVLink RX Responses User Data [Throughput %]",
     "nvlrx__bytes_packet_response_data_user.avg.pct_of_peak_sustained_elapsed", 1},
    {"NVLink TX Requests User Data [Throughput %]",
     "nvltx__bytes_packet_request_data_user.avg.pct_of_peak_sustained_elapsed", 1},
};

constexpr size_t kHardwareBufferBytes = 128u << 20;  // GPU memory CUPTI fills between decodes
constexpr auto kDecodePeriod = std::chrono::milliseconds(20);
constexpr int kStatusEveryDecodes = 50;  // the cumulative status record about once a second
// The counter data image holds this many decode periods of samples. It is emptied (re-initialised)
// while two periods of room are left, never by letting a decode fill it: on an H200 a decode that
// stopped with the image full lost the samples still in the hardware buffer (gaps of 17-149 ms).
constexpr uint64_t kImagePeriods = 8;
constexpr uint64_t kMaxImageSamples = 16384;

bool Debug() {
  static const bool on = [] {
    const char* v = std::getenv("SIGHTLINE_RECORD_DEBUG");
    return v != nullptr && *v == '1';
  }();
  return on;
}

std::string ResultText(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return std::string(s != nullptr ? s : "unknown CUPTI error") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

void LogFailure(const char* call, uint32_t device, CUptiResult r) {
  std::fprintf(stderr, "sightline-recorder: GPU metrics: %s on device %u failed: %s\n", call,
               device, ResultText(r).c_str());
}

struct HostObject {
  CUpti_Profiler_Host_Object* obj = nullptr;
  HostObject() = default;
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  ~HostObject() { Reset(); }
  void Reset() {
    if (obj == nullptr) return;
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = obj;
    cuptiProfilerHostDeinitialize(&p);
    obj = nullptr;
  }
};

// A host object configured with `metrics`, its config image and pass count; CUPTI's answer.
CUptiResult BuildConfig(const std::string& chip, const std::vector<uint8_t>& availability,
                        const std::vector<const char*>& metrics, HostObject* host,
                        std::vector<uint8_t>* image, size_t* passes) {
  host->Reset();
  CUpti_Profiler_Host_Initialize_Params init{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  init.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS) return r;
  host->obj = init.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host->obj;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) return r;
  CUpti_Profiler_Host_GetConfigImageSize_Params size{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host->obj;
  if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS) return r;
  image->assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params get{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = host->obj;
  get.configImageSize = image->size();
  get.pConfigImage = image->data();
  if (CUptiResult r = cuptiProfilerHostGetConfigImage(&get); r != CUPTI_SUCCESS) return r;
  CUpti_Profiler_Host_GetNumOfPasses_Params np{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.configImageSize = image->size();
  np.pConfigImage = image->data();
  if (CUptiResult r = cuptiProfilerHostGetNumOfPasses(&np); r != CUPTI_SUCCESS) return r;
  *passes = np.numOfPasses;
  return CUPTI_SUCCESS;
}

}  // namespace

struct PmSampler::Device {
  uint32_t index = 0;
  CUcontext context = nullptr;  // made current on the sampler thread while setting up
  std::string chip;
  std::vector<uint8_t> availability;
  HostObject host;  // configured with `metrics`: evaluates the samples
  std::vector<uint8_t> config;
  std::vector<const char*> metrics;  // CUPTI names, sampled, in value order
  std::vector<double> multipliers;
  CUpti_PmSampling_Object* pm = nullptr;
  std::vector<uint8_t> counter_data;
  size_t consumed = 0;  // samples of counter_data already posted
  size_t capacity = 0;  // samples counter_data holds
  size_t room = 0;      // re-initialise when fewer than this many samples are left
  bool usable = false;
  bool started = false;
  std::string error;
  uint64_t samples = 0, dropped = 0, overflows = 0, failed = 0, image_full = 0;
  std::vector<double> values;
  std::string body;
};

PmSampler::PmSampler(Writer* writer, uint64_t frequency_hz)
    : writer_(writer), interval_ns_(frequency_hz > 0 ? 1'000'000'000ull / frequency_hz : 100'000) {
  thread_ = std::thread([this] { Run(); });
}

PmSampler::~PmSampler() { Finish(); }

void PmSampler::AddDevice(uint32_t device, CUcontext context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  for (const auto& d : devices_) {
    if (d->index == device) return;
  }
  auto owned = std::make_unique<Device>();
  owned->index = device;
  owned->context = context;
  devices_.push_back(std::move(owned));
  const auto t0 = std::chrono::steady_clock::now();
  Setup(*devices_.back());
  if (Debug()) {
    std::fprintf(
        stderr, "sightline-recorder: GPU metrics: device %u set up in %.1f ms\n", device,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
}

// Called in the thread that created the context, before the program goes on: sampling covers the
// program's first kernels (the set-up costs the program a fraction of a second, once per device).
void PmSampler::Setup(Device& d) {
  const uint32_t device = d.index;
  auto fail = [&](const char* call, CUptiResult r) {
    LogFailure(call, device, r);
    d.error = std::string(call) + ": " + ResultText(r);
    PostStatus(d);
  };

  if (!profiler_initialized_) {
    CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (CUptiResult r = cuptiProfilerInitialize(&p); r != CUPTI_SUCCESS) {
      return fail("cuptiProfilerInitialize", r);
    }
    profiler_initialized_ = true;
  }
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device;
  if (CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) {
    return fail("cuptiDeviceGetChipName", r);
  }
  d.chip = chip.pChipName != nullptr ? chip.pChipName : "";
  CUpti_PmSampling_GetCounterAvailability_Params av{
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
  av.deviceIndex = device;
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&av); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingGetCounterAvailability", r);
  }
  d.availability.assign(av.counterAvailabilityImageSize, 0);
  av.pCounterAvailabilityImage = d.availability.data();
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&av); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingGetCounterAvailability", r);
  }

  // Greedy: each metric joins the set if the chip has it and the set still takes one pass.
  struct Verdict {
    const MetricSpec* spec;
    std::string reason;  // empty: sampled
  };
  std::vector<Verdict> verdicts;
  for (const MetricSpec& m : kMetrics) {
    std::vector<const char*> trial = d.metrics;
    trial.push_back(m.cupti);
    HostObject h;
    std::vector<uint8_t> image;
    size_t passes = 0;
    const CUptiResult r = BuildConfig(d.chip, d.availability, trial, &h, &image, &passes);
    if (r != CUPTI_SUCCESS) {
      verdicts.push_back({&m, "not available on " + d.chip + ": " + ResultText(r)});
    } else if (passes > 1) {
      verdicts.push_back({&m, "does not fit one pass with the metrics before it (" +
                                  std::to_string(passes) + " passes); PM sampling takes one"});
    } else {
      d.metrics.push_back(m.cupti);
      d.multipliers.push_back(m.multiplier);
      verdicts.push_back({&m, ""});
    }
  }
  uint32_t next = 0;
  for (const Verdict& v : verdicts) {
    recfmt::GpuMetricBody b{};
    b.device = device;
    b.index = v.reason.empty() ? next++ : recfmt::kNotSampled;
    std::vector<Writer::StringField> strings = {
        {offsetof(recfmt::GpuMetricBody, name_string), v.spec->name},
        {offsetof(recfmt::GpuMetricBody, cupti_string), v.spec->cupti}};
    if (!v.reason.empty()) {
      strings.push_back({offsetof(recfmt::GpuMetricBody, reason_string), v.reason});
    }
    writer_->PostRecord(recfmt::RecordType::kGpuMetric, &b, sizeof b, std::move(strings));
  }
  if (d.metrics.empty()) {
    d.error = "none of the metrics could be sampled on " + d.chip;
    PostStatus(d);
    return;
  }
  size_t passes = 0;
  if (CUptiResult r = BuildConfig(d.chip, d.availability, d.metrics, &d.host, &d.config, &passes);
      r != CUPTI_SUCCESS) {
    return fail("cuptiProfilerHostConfigAddMetrics", r);
  }

  CUpti_PmSampling_Enable_Params en{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  en.deviceIndex = device;
  if (CUptiResult r = cuptiPmSamplingEnable(&en); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingEnable", r);
  }
  d.pm = en.pPmSamplingObject;
  CUpti_PmSampling_SetConfig_Params sc{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  sc.pPmSamplingObject = d.pm;
  sc.configSize = d.config.size();
  sc.pConfig = d.config.data();
  sc.hardwareBufferSize = kHardwareBufferBytes;
  sc.samplingInterval = interval_ns_;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (CUptiResult r = cuptiPmSamplingSetConfig(&sc); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingSetConfig", r);
  }
  // Room for four decode periods of samples: a late decode still finds space.
  const uint64_t per_period = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::chrono::nanoseconds(kDecodePeriod).count()) / interval_ns_);
  d.capacity =
      std::min<uint64_t>(kMaxImageSamples, std::max<uint64_t>(256, kImagePeriods * per_period));
  d.room = std::min<uint64_t>(d.capacity / 2, 2 * per_period);
  CUpti_PmSampling_GetCounterDataSize_Params ds{
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pPmSamplingObject = d.pm;
  ds.pMetricNames = d.metrics.data();
  ds.numMetrics = d.metrics.size();
  ds.maxSamples = static_cast<uint32_t>(d.capacity);
  if (CUptiResult r = cuptiPmSamplingGetCounterDataSize(&ds); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingGetCounterDataSize", r);
  }
  d.counter_data.assign(ds.counterDataSize, 0);
  CUpti_PmSampling_CounterDataImage_Initialize_Params ci{
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pPmSamplingObject = d.pm;
  ci.counterDataSize = d.counter_data.size();
  ci.pCounterData = d.counter_data.data();
  if (CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&ci); r != CUPTI_SUCCESS) {
    return fail("cuptiPmSamplingCounterDataImageInitialize", r);
  }
  d.values.resize(d.metrics.size());
  d.usable = true;
  if (sampling_) {
    CUpti_PmSampling_Start_Params st{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    st.pPmSamplingObject = d.pm;
    if (CUptiResult r = cuptiPmSamplingStart(&st); r != CUPTI_SUCCESS) {
      d.usable = false;
      return fail("cuptiPmSamplingStart", r);
    }
    d.started = true;
  }
  PostStatus(d);
  if (Debug()) {
    std::fprintf(stderr,
                 "sightline-recorder: GPU metrics: device %u (%s) samples %zu metrics every %llu "
                 "ns; image of %zu samples, %zu bytes\n",
                 device, d.chip.c_str(), d.metrics.size(),
                 static_cast<unsigned long long>(interval_ns_), d.capacity, d.counter_data.size());
  }
}

void PmSampler::SetSampling(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_ || sampling_ == on) return;
  sampling_ = on;
  for (auto& owned : devices_) {
    Device& d = *owned;
    if (!d.usable || d.started == on) continue;
    if (on) {
      CUpti_PmSampling_Start_Params st{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
      st.pPmSamplingObject = d.pm;
      if (CUptiResult r = cuptiPmSamplingStart(&st); r != CUPTI_SUCCESS) {
        LogFailure("cuptiPmSamplingStart", d.index, r);
        continue;
      }
    } else {
      CUpti_PmSampling_Stop_Params sp{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
      sp.pPmSamplingObject = d.pm;
      if (CUptiResult r = cuptiPmSamplingStop(&sp); r != CUPTI_SUCCESS) {
        LogFailure("cuptiPmSamplingStop", d.index, r);
      }
      Decode(d);  // what the window held, before the next one starts
    }
    d.started = on;
  }
}

void PmSampler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  int decodes = 0;
  while (!stopping_) {
    cv_.wait_for(lock, kDecodePeriod, [this] { return stopping_; });
    if (stopping_) break;
    DecodeAll();
    if (++decodes % kStatusEveryDecodes == 0) {
      for (const auto& d : devices_) {
        if (d->usable) PostStatus(*d);
      }
    }
  }
}

void PmSampler::DecodeAll() {
  for (auto& d : devices_) {
    if (d->usable) Decode(*d);
  }
}

// Moves what the hardware buffer holds into the counter data image and posts the completed
// samples; when the image is full, it starts over empty and decodes again.
void PmSampler::Decode(Device& d) {
  for (int round = 0; round < 64; ++round) {
    CUpti_PmSampling_DecodeData_Params dd{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    dd.pPmSamplingObject = d.pm;
    dd.pCounterDataImage = d.counter_data.data();
    dd.counterDataImageSize = d.counter_data.size();
    const CUptiResult r = cuptiPmSamplingDecodeData(&dd);
    if (dd.overflow != 0 || r == CUPTI_ERROR_OUT_OF_MEMORY) ++d.overflows;
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
      LogFailure("cuptiPmSamplingDecodeData", d.index, r);
      return;
    }
    CUpti_PmSampling_GetCounterDataInfo_Params info{
        CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = d.counter_data.data();
    info.counterDataImageSize = d.counter_data.size();
    if (CUptiResult ri = cuptiPmSamplingGetCounterDataInfo(&info); ri != CUPTI_SUCCESS) {
      LogFailure("cuptiPmSamplingGetCounterDataInfo", d.index, ri);
      return;
    }
    for (size_t s = d.consumed; s < info.numCompletedSamples; ++s) {
      CUpti_PmSampling_CounterData_GetSampleInfo_Params si{
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
      si.pPmSamplingObject = d.pm;
      si.pCounterDataImage = d.counter_data.data();
      si.counterDataImageSize = d.counter_data.size();
      si.sampleIndex = s;
      if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) {
        ++d.failed;
        continue;
      }
      // The first sample after each start runs from the configuration to the first trigger.
      if (si.endTimestamp < si.startTimestamp ||
          si.endTimestamp - si.startTimestamp > 2 * interval_ns_) {
        ++d.dropped;
        continue;
      }
      CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      ev.pHostObject = d.host.obj;
      ev.pCounterDataImage = d.counter_data.data();
      ev.counterDataImageSize = d.counter_data.size();
      ev.rangeIndex = s;
      ev.ppMetricNames = d.metrics.data();
      ev.numMetrics = d.metrics.size();
      ev.pMetricValues = d.values.data();
      if (cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS) {
        ++d.failed;
        continue;
      }
      recfmt::GpuMetricSampleHeader h{};
      h.start_ns = static_cast<int64_t>(si.startTimestamp);
      h.end_ns = static_cast<int64_t>(si.endTimestamp);
      h.device = d.index;
      h.count = static_cast<uint32_t>(d.values.size());
      d.body.assign(reinterpret_cast<const char*>(&h), sizeof h);
      for (size_t m = 0; m < d.values.size(); ++m) {
        const double v = d.values[m] * d.multipliers[m];
        d.body.append(reinterpret_cast<const char*>(&v), sizeof v);
      }
      writer_->PostRecord(recfmt::RecordType::kGpuMetricSample, d.body.data(), d.body.size());
      ++d.samples;
    }
    d.consumed = info.numCompletedSamples;
    const bool full = dd.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
    const bool low = info.numPopulatedSamples == info.numCompletedSamples &&
                     info.numCompletedSamples + d.room > d.capacity;
    if (!full && !low) return;
    if (full) ++d.image_full;
    CUpti_PmSampling_CounterDataImage_Initialize_Params ci{
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ci.pPmSamplingObject = d.pm;
    ci.counterDataSize = d.counter_data.size();
    ci.pCounterData = d.counter_data.data();
    if (CUptiResult ri = cuptiPmSamplingCounterDataImageInitialize(&ci); ri != CUPTI_SUCCESS) {
      LogFailure("cuptiPmSamplingCounterDataImageInitialize", d.index, ri);
      d.usable = false;
      return;
    }
    d.consumed = 0;
    if (!full) return;
  }
}

void PmSampler::PostStatus(const Device& d) {
  recfmt::GpuMetricsStatusBody s{};
  s.interval_ns = static_cast<int64_t>(interval_ns_);
  s.samples = d.samples;
  s.dropped_samples = d.dropped;
  s.overflows = d.overflows;
  s.failed_samples = d.failed;
  s.device = d.index;
  s.clock = static_cast<uint32_t>(recfmt::GpuMetricsClock::kPmSamplingTimestamp);
  s.metrics = static_cast<uint32_t>(d.metrics.size());
  std::vector<Writer::StringField> strings;
  if (!d.error.empty()) {
    strings.push_back({offsetof(recfmt::GpuMetricsStatusBody, error_string), d.error});
  }
  writer_->PostRecord(recfmt::RecordType::kGpuMetricsStatus, &s, sizeof s, std::move(strings));
}

// Stops the device's sampling, posts what is left and its status, and gives PM sampling back.
// Before its context goes away: after that, CUPTI's PM sampling calls crashed (H200, CUDA 13.0).
void PmSampler::EndDevice(Device& d) {
  if (Debug()) {
    std::fprintf(stderr,
                 "sightline-recorder: GPU metrics: ending device %u: %llu samples, %llu "
                 "dropped, %llu overflows, %llu full images\n",
                 d.index, static_cast<unsigned long long>(d.samples),
                 static_cast<unsigned long long>(d.dropped),
                 static_cast<unsigned long long>(d.overflows),
                 static_cast<unsigned long long>(d.image_full));
  }
  if (d.usable) {
    if (d.started) {
      CUpti_PmSampling_Stop_Params sp{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
      sp.pPmSamplingObject = d.pm;
      cuptiPmSamplingStop(&sp);
      d.started = false;
    }
    Decode(d);
    PostStatus(d);
  }
  if (d.pm != nullptr) {
    CUpti_PmSampling_Disable_Params dis{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    dis.pPmSamplingObject = d.pm;
    cuptiPmSamplingDisable(&dis);
    d.pm = nullptr;
  }
  d.usable = false;
  d.context = nullptr;
}

void PmSampler::ContextDestroying(CUcontext context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  for (auto& d : devices_) {
    if (d->context == context && context != nullptr) EndDevice(*d);
  }
}

void PmSampler::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // At exit no PM sampling call is made: on an H200 (CUDA 13.0) Stop, DecodeData and Disable made
  // from an atexit handler hung or crashed the process, taking the trace's last buffers with it.
  // What the last decode left (at most one decode period, kDecodePeriod) is not recorded; the
  // driver ends the sampling with the process.
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = true;
  for (auto& d : devices_) {
    if (d->usable) PostStatus(*d);
    if (Debug()) {
      std::fprintf(stderr,
                   "sightline-recorder: GPU metrics: device %u at exit: %llu samples, %llu "
                   "dropped, %llu overflows, %llu full images\n",
                   d->index, static_cast<unsigned long long>(d->samples),
                   static_cast<unsigned long long>(d->dropped),
                   static_cast<unsigned long long>(d->overflows),
                   static_cast<unsigned long long>(d->image_full));
    }
  }
}

}  // namespace sightline::recorder
