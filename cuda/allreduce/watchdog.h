// A host thread that turns a hang into an error: the harness arms it around each step with a
// deadline; if the step has not finished by then, the watchdog prints what was running, the ranks
// that had not reached this rank's last rendezvous, and any device-side flag timeout, then ends the
// process (exit code 3) so that the launcher tears the job down.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "bootstrap.h"
#include "comm.h"

namespace sightline::allreduce {

class Watchdog {
 public:
  Watchdog(int rank, const Bootstrap* bootstrap, const DeviceError* device_error);
  ~Watchdog();
  void Arm(const std::string& what, double seconds);
  void Disarm();

 private:
  void Loop();
  const int rank_;
  const Bootstrap* bootstrap_;
  const DeviceError* device_error_;
  std::mutex mu_;
  std::string what_;
  std::chrono::steady_clock::time_point deadline_;
  double seconds_ = 0;
  bool armed_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sightline::allreduce
