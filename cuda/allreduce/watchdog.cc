// See watchdog.h.
#include "watchdog.h"

#include <unistd.h>

#include <cstdio>

namespace sightline::allreduce {

Watchdog::Watchdog(int rank, const Bootstrap* bootstrap, const DeviceError* device_error)
    : rank_(rank), bootstrap_(bootstrap), device_error_(device_error) {
  thread_ = std::thread([this] { Loop(); });
}

Watchdog::~Watchdog() {
  stop_ = true;
  thread_.join();
}

void Watchdog::Arm(const std::string& what, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  what_ = what;
  seconds_ = seconds;
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  armed_ = true;
}

void Watchdog::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

void Watchdog::Loop() {
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> lock(mu_);
    if (!armed_ || std::chrono::steady_clock::now() < deadline_) continue;
    std::fprintf(stderr,
                 "rank %d: watchdog: '%s' did not finish within %.0f s; ranks behind this one at "
                 "the last rendezvous: %s\n",
                 rank_, what_.c_str(), seconds_,
                 bootstrap_ != nullptr ? bootstrap_->Laggards().c_str() : "(no rendezvous)");
    if (device_error_ != nullptr && device_error_->code != 0) {
      std::fprintf(stderr,
                   "rank %d: a device flag wait timed out: rank %d did not arrive (block %d, "
                   "expected flag %llu, saw %llu)\n",
                   rank_, device_error_->missing_rank, device_error_->block,
                   static_cast<unsigned long long>(device_error_->expected),
                   static_cast<unsigned long long>(device_error_->seen));
    }
    std::fflush(stderr);
    _exit(3);
  }
}

}  // namespace sightline::allreduce
