// GPU metrics for `sightline record --gpu-metrics` (issue 16): CUPTI's PM sampling API
// (cupti_pmsampling.h) samples a fixed set of device-wide metrics, the ones Nsight Systems shows
// for --gpu-metrics-devices and under its names, at a fixed GPU-time interval. Each device the
// program creates a context on is set up once (AddDevice, from CUPTI's context-created callback);
// a background thread decodes the hardware buffer every few tens of milliseconds and posts the
// samples to the writer as records (docs/formats/recorder.md). What a device could not do (a
// metric the chip lacks or that does not fit one pass, PM sampling refused) is recorded with
// CUPTI's answer; the recorded program never fails because of it.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "writer.h"

namespace sightline::recorder {

class PmSampler {
 public:
  PmSampler(Writer* writer, uint64_t frequency_hz);
  ~PmSampler();

  // Sets up sampling on `device` (CUDA device ordinal) the first time one of its contexts
  // (`context`) is created; starts it when sampling is on (SetSampling). From CUPTI's
  // context-created callback.
  void AddDevice(uint32_t device, CUcontext context);
  // From CUPTI's context-destroy-starting callback: a device whose first context this is stops
  // sampling and posts what is left now, while the context still exists.
  void ContextDestroying(CUcontext context);
  // Capture windows: sampling runs only while on (on from the start without a capture range).
  void SetSampling(bool on);
  // At exit: stops the decoding thread and writes the status records (no PM sampling call: see
  // the .cc). Idempotent.
  void Finish();

  uint64_t interval_ns() const { return interval_ns_; }

 private:
  struct Device;
  void Run();
  void Setup(Device& d);
  void EndDevice(Device& d);
  void DecodeAll();
  void Decode(Device& d);
  void PostStatus(const Device& d);

  Writer* writer_;
  const uint64_t interval_ns_;
  std::mutex mu_;  // devices_, sampling_, stopping_; CUPTI PM calls are made under it
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Device>> devices_;
  bool profiler_initialized_ = false;
  bool sampling_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace sightline::recorder
